"""Correct: projections as bare nn.Parameters used as x @ W."""
import math

import torch
from torch import nn


class ParamHead(nn.Module):
    def __init__(self, embed_dim, head_size, context_length):
        super().__init__()
        self.Wq = nn.Parameter(torch.randn(embed_dim, head_size) * 0.3)
        self.Wk = nn.Parameter(torch.randn(embed_dim, head_size) * 0.3)
        self.Wv = nn.Parameter(torch.randn(embed_dim, head_size) * 0.3)

    def forward(self, x):
        T = x.size(1)
        q, k, v = x @ self.Wq, x @ self.Wk, x @ self.Wv
        s = q @ k.transpose(1, 2) / math.sqrt(q.size(-1))
        s = s.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float("-inf"))
        return torch.softmax(s, -1) @ v
