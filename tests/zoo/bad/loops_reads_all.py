"""Broken on purpose: the inner loop runs over every position, so each token reads its future."""
# expect: item=5 mistake=no_mask
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
        out = torch.zeros_like(v)
        for b in range(B):
            for t in range(T):
                s = torch.stack([q[b, t].dot(k[b, j]) / math.sqrt(d) for j in range(T)])
                w = torch.softmax(s, dim=0)
                out[b, t] = (w[:, None] * v[b]).sum(0)
        return out
