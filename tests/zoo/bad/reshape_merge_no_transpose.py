"""Broken on purpose: heads split correctly, but merged with reshape and no transpose, so
each output row mixes positions of one head instead of the heads of one position."""
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
        q, k, v = (m(x).view(B, T, self.h, d).transpose(1, 2) for m in (self.query, self.key, self.value))
        s = (q @ k.transpose(-2, -1)) / math.sqrt(d)
        s = s.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
        y = (s.softmax(-1) @ v).reshape(B, T, C)  # [B, H, T, d] read as [B, T, C]
        return self.proj(y)
