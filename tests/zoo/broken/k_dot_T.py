"""Broken on purpose: k.T reverses all three axes of [B, T, d]; it runs only when B = T = d."""
import math

import torch
from torch import nn


class AttentionHead(nn.Module):
    def __init__(self, embed_dim, head_size, context_length):
        super().__init__()
        self.query = nn.Linear(embed_dim, head_size, bias=False)
        self.key = nn.Linear(embed_dim, head_size, bias=False)
        self.value = nn.Linear(embed_dim, head_size, bias=False)

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.query(x), self.key(x), self.value(x)
        s = q @ k.T / math.sqrt(q.shape[-1])
        s = s.masked_fill(torch.ones(T, T).triu(1).bool(), float("-inf"))
        return torch.softmax(s, dim=-1) @ v
