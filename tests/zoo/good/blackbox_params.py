"""Correct, with projections the auditor cannot identify (bare parameters with odd names):
only the black-box checks and the recorded calls can judge it."""
import torch
from torch import nn


class Head(nn.Module):
    def __init__(self, embed_dim, head_size, context_length):
        super().__init__()
        self.p1 = nn.Parameter(torch.randn(embed_dim, head_size) / embed_dim**0.5)
        self.p2 = nn.Parameter(torch.randn(embed_dim, head_size) / embed_dim**0.5)
        self.p3 = nn.Parameter(torch.randn(embed_dim, head_size) / embed_dim**0.5)

    def forward(self, x):
        T = x.size(1)
        q, k, v = x @ self.p1, x @ self.p2, x @ self.p3
        s = torch.matmul(q, k.mT) * q.size(-1) ** -0.5
        s = s.masked_fill(~torch.tril(torch.ones(T, T, dtype=torch.bool)), float("-inf"))
        return torch.softmax(s, dim=-1) @ v
