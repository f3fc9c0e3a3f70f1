"""Broken on purpose: a multi-head whose functional dropout is always on (training=True)."""
# expect: item=0 mistake=- finding=nondeterministic
import math

import torch
import torch.nn.functional as F
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, context_length):
        super().__init__()
        self.n = num_heads
        self.qkv = nn.Linear(embed_dim, 3 * embed_dim, bias=False)
        self.proj = nn.Linear(embed_dim, embed_dim, bias=False)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.n, C // self.n).permute(2, 0, 3, 1, 4)
        s = q @ k.transpose(-1, -2) / math.sqrt(C // self.n)
        s = s.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
        w = F.dropout(s.softmax(-1), p=0.25, training=True)
        return self.proj((w @ v).transpose(1, 2).reshape(B, T, C))
