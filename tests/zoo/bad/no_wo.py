"""Broken on purpose: lesson-style no output projection after the concat."""
# expect: item=8 mistake=no_output_projection
import math

import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self, embed_dim, head_size, context_length):
        super().__init__()
        self.query = nn.Linear(embed_dim, head_size, bias=False)
        self.key = nn.Linear(embed_dim, head_size, bias=False)
        self.value = nn.Linear(embed_dim, head_size, bias=False)

    def forward(self, x):
        T = x.size(1)
        q, k, v = self.query(x), self.key(x), self.value(x)
        s = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
        s = s.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float("-inf"))
        return torch.softmax(s, dim=-1) @ v


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, context_length):
        super().__init__()
        self.heads = nn.ModuleList([Head(embed_dim, embed_dim // num_heads, context_length) for _ in range(num_heads)])

    def forward(self, x):
        B, T, C = x.shape
        return torch.cat([h(x) for h in self.heads], dim=-1)
