"""Broken on purpose: F.dropout without training=self.training keeps dropping in eval mode."""
# expect: item=0 mistake=- finding=nondeterministic
import math

import torch
from torch import nn
import torch.nn.functional as F


class AttentionHead(nn.Module):
    def __init__(self, embed_dim, head_size, context_length):
        super().__init__()
        self.query = nn.Linear(embed_dim, head_size, bias=False)
        self.key = nn.Linear(embed_dim, head_size, bias=False)
        self.value = nn.Linear(embed_dim, head_size, bias=False)

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.query(x), self.key(x), self.value(x)
        s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        s = s.masked_fill(torch.ones(T, T).triu(1).bool(), float("-inf"))
        w = F.dropout(F.softmax(s, dim=-1), p=0.2)
        return w @ v
