"""Broken on purpose: forward takes the keys from value_layer and the values from key_layer."""
# expect: item=2 mistake=-
import math

import torch
from torch import nn


class AttentionHead(nn.Module):
    def __init__(self, embed_dim, head_size, context_length):
        super().__init__()
        self.query_layer = nn.Linear(embed_dim, head_size, bias=False)
        self.key_layer = nn.Linear(embed_dim, head_size, bias=False)
        self.value_layer = nn.Linear(embed_dim, head_size, bias=False)

    def forward(self, x):
        T = x.shape[1]
        q = self.query_layer(x)
        k = self.value_layer(x)
        v = self.key_layer(x)
        s = (q @ k.transpose(-2, -1)) / math.sqrt(k.shape[-1])
        s = s.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
        return s.softmax(dim=-1) @ v
