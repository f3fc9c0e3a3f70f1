"""Correct: d2l-style multi-head attention whose projections are nn.LazyLinear (their input
size is only known after the first forward), with transpose_qkv/transpose_output helpers."""
# expect: exit=0
import math

import torch
import torch.nn as nn


def transpose_qkv(X, num_heads):
    X = X.reshape(X.shape[0], X.shape[1], num_heads, -1)  # [B, T, H, d]
    X = X.permute(0, 2, 1, 3)  # [B, H, T, d]
    return X.reshape(-1, X.shape[2], X.shape[3])  # [B·H, T, d]


def transpose_output(X, num_heads):
    X = X.reshape(-1, num_heads, X.shape[1], X.shape[2])  # [B, H, T, d]
    X = X.permute(0, 2, 1, 3)  # [B, T, H, d]
    return X.reshape(X.shape[0], X.shape[1], -1)  # [B, T, C]


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, context_length, bias=False):
        super().__init__()
        self.num_heads = num_heads
        self.W_q = nn.LazyLinear(embed_dim, bias=bias)
        self.W_k = nn.LazyLinear(embed_dim, bias=bias)
        self.W_v = nn.LazyLinear(embed_dim, bias=bias)
        self.W_o = nn.LazyLinear(embed_dim, bias=bias)

    def forward(self, x):
        queries = transpose_qkv(self.W_q(x), self.num_heads)
        keys = transpose_qkv(self.W_k(x), self.num_heads)
        values = transpose_qkv(self.W_v(x), self.num_heads)
        d = queries.shape[-1]
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)  # [B·H, T, T]
        T = x.shape[1]
        keep = torch.tril(torch.ones(T, T, dtype=torch.bool))
        scores = scores.masked_fill(~keep, -1e6)
        weights = nn.functional.softmax(scores, dim=-1)
        output = torch.bmm(weights, values)
        return self.W_o(transpose_output(output, self.num_heads))
