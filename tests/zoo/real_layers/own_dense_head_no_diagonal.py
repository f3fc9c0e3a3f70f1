"""Broken on purpose: a single head with hand-written Dense layers (query.dense...) whose mask
also hides the diagonal, so each position never reads itself."""
# expect: item=5
import math

import torch
import torch.nn as nn


class Dense(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_out, n_in) / math.sqrt(n_in))
        self.bias = nn.Parameter(torch.zeros(n_out))

    def forward(self, x):
        return x @ self.weight.T + self.bias


class Role(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.dense = Dense(n_in, n_out)

    def forward(self, x):
        return self.dense(x)


class DenseHead(nn.Module):
    def __init__(self, embed_dim, head_size, context_length):
        super().__init__()
        self.query = Role(embed_dim, head_size)
        self.key = Role(embed_dim, head_size)
        self.value = Role(embed_dim, head_size)
        self.register_buffer("tril", torch.tril(torch.ones(context_length, context_length), diagonal=-1))

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.query(x), self.key(x), self.value(x)  # [B, T, d]
        wei = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # [B, T, T]
        wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        return torch.softmax(wei, dim=-1) @ v
