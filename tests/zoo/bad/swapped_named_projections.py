"""Broken on purpose: the layer called query_projection computes the keys in forward and
key_projection the queries."""
# expect: item=3 mistake=swapped_qk
import math

import torch
from torch import nn


class AttentionHead(nn.Module):
    def __init__(self, embed_dim, head_size, context_length):
        super().__init__()
        self.query_projection = nn.Linear(embed_dim, head_size, bias=False)
        self.key_projection = nn.Linear(embed_dim, head_size, bias=False)
        self.value_projection = nn.Linear(embed_dim, head_size, bias=False)

    def forward(self, x):
        T = x.shape[1]
        queries = self.key_projection(x)
        keys = self.query_projection(x)
        values = self.value_projection(x)
        scores = queries @ keys.transpose(-2, -1) / math.sqrt(keys.shape[-1])
        blocked = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        scores = scores.masked_fill(blocked, float("-inf"))
        return torch.softmax(scores, dim=-1) @ values
