"""Broken on purpose: the values are computed with W_query (the value layer is never used)."""
# expect: item=2 mistake=-
import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, context_length):
        super().__init__()
        self.h = num_heads
        self.W_query = nn.Linear(embed_dim, embed_dim, bias=False)
        self.W_key = nn.Linear(embed_dim, embed_dim, bias=False)
        self.W_value = nn.Linear(embed_dim, embed_dim, bias=False)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=False)

    def forward(self, x):
        B, T, C = x.shape
        d = C // self.h
        q = self.W_query(x).view(B, T, self.h, d).transpose(1, 2)
        k = self.W_key(x).view(B, T, self.h, d).transpose(1, 2)
        v = self.W_query(x).view(B, T, self.h, d).transpose(1, 2)
        s = (q @ k.transpose(-2, -1)) / math.sqrt(d)
        s = s.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
        y = (s.softmax(-1) @ v).transpose(1, 2).reshape(B, T, C)
        return self.out_proj(y)
