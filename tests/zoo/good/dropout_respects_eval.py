"""Correct: functional dropout told whether the module is training, so eval mode is exact."""
import math

import torch
import torch.nn.functional as F
from torch import nn


class AttentionHead(nn.Module):
    def __init__(self, embed_dim, head_size, context_length):
        super().__init__()
        self.query = nn.Linear(embed_dim, head_size, bias=False)
        self.key = nn.Linear(embed_dim, head_size, bias=False)
        self.value = nn.Linear(embed_dim, head_size, bias=False)

    def forward(self, x):
        T = x.size(1)
        q, k, v = self.query(x), self.key(x), self.value(x)
        s = (q @ k.mT) / math.sqrt(k.size(-1))
        s = s.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
        w = F.dropout(s.softmax(-1), p=0.3, training=self.training)
        return w @ v
