"""Broken on purpose: heads are split with interleaved features but merged back as blocks, so
W_O sees each head's features in another head's columns."""
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
        self.proj = nn.Linear(embed_dim, embed_dim, bias=False)

    def forward(self, x):
        B, T, C = x.shape
        d = C // self.h
        def split(t):
            return t.view(B, T, d, self.h).permute(0, 3, 1, 2)
        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        s = q @ k.transpose(-2, -1) / math.sqrt(d)
        s = s.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
        y = s.softmax(-1) @ v
        return self.proj(y.transpose(1, 2).reshape(B, T, C))
