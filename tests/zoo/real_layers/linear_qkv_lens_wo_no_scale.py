"""Broken on purpose, with a W_O the auditor cannot read (TransformerLens-style [H, d_head, C])
next to nn.Linear query/key/value: the scores are not scaled. The scaling is seen directly, so
the audit fails item 4 (exit 1)."""
# expect: item=4
import math

import torch
import torch.nn as nn


class SplitOutput(nn.Module):
    def __init__(self, embed_dim, num_heads, context_length):
        super().__init__()
        self.num_heads = num_heads
        d = embed_dim // num_heads
        self.query = nn.Linear(embed_dim, embed_dim, bias=False)
        self.key = nn.Linear(embed_dim, embed_dim, bias=False)
        self.value = nn.Linear(embed_dim, embed_dim, bias=False)
        self.W_O = nn.Parameter(torch.randn(num_heads, d, embed_dim) / math.sqrt(d))
        self.register_buffer("tril", torch.tril(torch.ones(context_length, context_length)))

    def forward(self, x):
        B, T, C = x.shape
        H = self.num_heads
        q, k, v = (f(x).view(B, T, H, C // H).transpose(1, 2) for f in (self.query, self.key, self.value))
        wei = q @ k.transpose(-2, -1)  # [B, H, T, T]
        wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf")).softmax(dim=-1)
        z = wei @ v  # [B, H, T, d]
        return torch.einsum("bhtd,hdc->btc", z, self.W_O)
