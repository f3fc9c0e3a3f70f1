"""Broken on purpose: a loop over range(num_heads) that calls the same single head each time."""
# expect: item=2 mistake=-
import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, context_length):
        super().__init__()
        self.n = num_heads
        d = embed_dim // num_heads
        self.wq = nn.Linear(embed_dim, d, bias=False)
        self.wk = nn.Linear(embed_dim, d, bias=False)
        self.wv = nn.Linear(embed_dim, d, bias=False)
        self.wo = nn.Linear(embed_dim, embed_dim, bias=False)

    def forward(self, x):
        T = x.shape[1]
        outs = []
        for _ in range(self.n):
            s = self.wq(x) @ self.wk(x).transpose(-2, -1) / math.sqrt(self.wq.out_features)
            s = s.masked_fill(torch.ones(T, T).triu(1).bool(), float("-inf"))
            outs.append(s.softmax(-1) @ self.wv(x))
        return self.wo(torch.cat(outs, dim=-1))
