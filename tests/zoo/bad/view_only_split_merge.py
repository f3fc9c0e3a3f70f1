"""Broken on purpose: heads split with view straight to [B, H, T, d] and merged back with view,
no transpose either way."""
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
        q = self.query(x).view(B, self.h, T, d)
        k = self.key(x).view(B, self.h, T, d)
        v = self.value(x).view(B, self.h, T, d)
        s = (q @ k.transpose(-2, -1)) / math.sqrt(d)
        s = s.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
        y = (s.softmax(-1) @ v).view(B, T, C)
        return self.proj(y)
