"""Broken on purpose: lesson-style heads concatenated on the time axis, then viewed back."""
# expect: item=8 mistake=concat_time_axis
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
        self.output_projection = nn.Linear(embed_dim, embed_dim, bias=False)

    def forward(self, x):
        B, T, C = x.shape
        concat = torch.cat([h(x) for h in self.heads], dim=1).view(B, T, C)
        return self.output_projection(concat)
