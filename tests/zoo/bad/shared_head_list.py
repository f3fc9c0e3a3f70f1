"""Broken on purpose: the head list repeats ONE module, so every head has the same weights."""
# expect: item=2 mistake=-
import math

import torch
from torch import nn


class OneHead(nn.Module):
    def __init__(self, c, d, n_ctx):
        super().__init__()
        self.query = nn.Linear(c, d, bias=False)
        self.key = nn.Linear(c, d, bias=False)
        self.value = nn.Linear(c, d, bias=False)
        self.register_buffer("tri", torch.tril(torch.ones(n_ctx, n_ctx)))

    def forward(self, x):
        T = x.shape[1]
        s = self.query(x) @ self.key(x).mT / math.sqrt(self.key.out_features)
        s = s.masked_fill(self.tri[:T, :T] == 0, float("-inf"))
        return s.softmax(dim=-1) @ self.value(x)


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, context_length):
        super().__init__()
        head = OneHead(embed_dim, embed_dim // num_heads, context_length)
        self.heads = nn.ModuleList([head] * num_heads)
        self.proj = nn.Linear(embed_dim, embed_dim, bias=False)

    def forward(self, x):
        return self.proj(torch.cat([h(x) for h in self.heads], dim=-1))
