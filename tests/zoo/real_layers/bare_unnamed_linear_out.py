"""Correct: bare nn.Parameter projections with names that say nothing (A, B, G, used as
x @ W) next to an nn.Linear output layer named mix: the roles are read from what the forward
computes, and mix is loaded as W_O."""
# expect: exit=0
import math

import torch
import torch.nn as nn


class Unnamed(nn.Module):
    def __init__(self, embed_dim, num_heads, context_length):
        super().__init__()
        self.h = num_heads
        self.A = nn.Parameter(torch.randn(embed_dim, embed_dim) / math.sqrt(embed_dim))
        self.B = nn.Parameter(torch.randn(embed_dim, embed_dim) / math.sqrt(embed_dim))
        self.G = nn.Parameter(torch.randn(embed_dim, embed_dim) / math.sqrt(embed_dim))
        self.mix = nn.Linear(embed_dim, embed_dim)

    def forward(self, x):
        B, T, C = x.shape
        split = lambda t: t.view(B, T, self.h, C // self.h).transpose(1, 2)  # noqa: E731
        q, k, v = split(x @ self.A), split(x @ self.B), split(x @ self.G)  # [B, H, T, d]
        s = q @ k.transpose(-2, -1) / math.sqrt(C // self.h)
        s = s.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
        y = (s.softmax(-1) @ v).transpose(1, 2).reshape(B, T, C)
        return self.mix(y)
