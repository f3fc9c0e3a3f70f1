"""Broken on purpose: the per-head outputs are concatenated last head first, so W_O reads each
head's features in the wrong columns."""
# expect: item=8 mistake=-
import math

import torch
from torch import nn


class Head(nn.Module):
    def __init__(self, c, d):
        super().__init__()
        self.query = nn.Linear(c, d, bias=False)
        self.key = nn.Linear(c, d, bias=False)
        self.value = nn.Linear(c, d, bias=False)

    def forward(self, x):
        T = x.shape[1]
        s = self.query(x) @ self.key(x).transpose(1, 2) / math.sqrt(self.key.out_features)
        s = s.masked_fill(torch.ones(T, T).triu(1).bool(), float("-inf"))
        return s.softmax(-1) @ self.value(x)


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, context_length):
        super().__init__()
        self.heads = nn.ModuleList(Head(embed_dim, embed_dim // num_heads) for _ in range(num_heads))
        self.output_projection = nn.Linear(embed_dim, embed_dim, bias=False)

    def forward(self, x):
        outs = [h(x) for h in self.heads]
        return self.output_projection(torch.cat(outs[::-1], dim=-1))
