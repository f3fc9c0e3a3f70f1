"""Broken on purpose, bare matrices with names the auditor does not know: no causal mask."""
# expect: item=5 mistake=no_mask
import torch
from torch import nn


class Head(nn.Module):
    def __init__(self, embed_dim, head_size, context_length):
        super().__init__()
        self.a = nn.Parameter(torch.randn(embed_dim, head_size))
        self.b = nn.Parameter(torch.randn(embed_dim, head_size))
        self.c = nn.Parameter(torch.randn(embed_dim, head_size))

    def forward(self, x):
        q, k, v = x @ self.a, x @ self.b, x @ self.c
        w = torch.softmax(q @ k.transpose(1, 2) / q.shape[-1] ** 0.5, dim=-1)
        return w @ v
