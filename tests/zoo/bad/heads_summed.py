"""Broken on purpose: the heads' outputs are summed over the head axis instead of being
concatenated, and the output projection maps one head's width to C."""
# expect: item=8 mistake=-
import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, context_length):
        super().__init__()
        self.h = num_heads
        self.query = nn.Linear(embed_dim, embed_dim, bias=False)
        self.key = nn.Linear(embed_dim, embed_dim, bias=False)
        self.value = nn.Linear(embed_dim, embed_dim, bias=False)
        self.out = nn.Linear(embed_dim // num_heads, embed_dim, bias=False)

    def forward(self, x):
        B, T, C = x.shape
        d = C // self.h
        q, k, v = (m(x).view(B, T, self.h, d).transpose(1, 2) for m in (self.query, self.key, self.value))
        s = (q @ k.transpose(-2, -1)) / math.sqrt(d)
        s = s.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
        y = (s.softmax(-1) @ v).sum(dim=1)  # [B, T, d]: heads summed, not concatenated
        return self.out(y)
