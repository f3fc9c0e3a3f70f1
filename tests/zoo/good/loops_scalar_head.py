"""Correct: every score and every weighted sum written as explicit Python loops."""
import math

import torch
from torch import nn


class AttentionHead(nn.Module):
    def __init__(self, embed_dim, head_size, context_length):
        super().__init__()
        self.query = nn.Linear(embed_dim, head_size, bias=False)
        self.key = nn.Linear(embed_dim, head_size, bias=False)
        self.value = nn.Linear(embed_dim, head_size, bias=False)

    def forward(self, x):
        q, k, v = self.query(x), self.key(x), self.value(x)
        B, T, d = q.shape
        rows = []
        for b in range(B):
            out_b = []
            for t in range(T):
                seen = torch.stack([(q[b, t] * k[b, j]).sum() / math.sqrt(d) for j in range(t + 1)])
                w = torch.softmax(seen, dim=0)
                out_b.append(sum(w[j] * v[b, j] for j in range(t + 1)))
            rows.append(torch.stack(out_b))
        return torch.stack(rows)
