"""Broken on purpose: labml-style nested query.linear/key.linear, with Q and K swapped in
the scores (each row compares one key with every query)."""
# expect: item=3
import math

import torch
import torch.nn as nn


class PrepareForMultiHeadAttention(nn.Module):
    def __init__(self, d_model, heads, d_k, bias):
        super().__init__()
        self.linear = nn.Linear(d_model, heads * d_k, bias=bias)
        self.heads = heads
        self.d_k = d_k

    def forward(self, x):
        head_shape = x.shape[:-1]
        x = self.linear(x)
        return x.view(*head_shape, self.heads, self.d_k)  # [B, T, H, d_k]


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, context_length, bias=True):
        super().__init__()
        self.d_k = embed_dim // num_heads
        self.heads = num_heads
        self.query = PrepareForMultiHeadAttention(embed_dim, num_heads, self.d_k, bias)
        self.key = PrepareForMultiHeadAttention(embed_dim, num_heads, self.d_k, bias)
        self.value = PrepareForMultiHeadAttention(embed_dim, num_heads, self.d_k, True)
        self.output = nn.Linear(embed_dim, embed_dim)
        self.scale = 1 / math.sqrt(self.d_k)
        self.register_buffer("mask", torch.tril(torch.ones(context_length, context_length)))

    def get_scores(self, query, key):
        return torch.einsum("bihd,bjhd->bijh", key, query)

    def forward(self, x):
        B, T, C = x.shape
        query, key, value = self.query(x), self.key(x), self.value(x)
        scores = self.get_scores(query, key) * self.scale  # [B, T, T, H]
        scores = scores.masked_fill(self.mask[:T, :T, None] == 0, float("-inf"))
        attn = torch.softmax(scores, dim=2)
        y = torch.einsum("bijh,bjhd->bihd", attn, value)  # [B, T, H, d_k]
        return self.output(y.reshape(B, T, C))
