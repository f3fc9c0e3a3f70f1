"""Correct, but in a layout the auditor cannot read: TransformerLens-style per-head 3-D
parameters W_Q, W_K, W_V [H, C, d_head] and W_O [H, d_head, C], applied with einsum. No
lesson weights can be loaded, so the audit must say it could not decide (exit 2), never 0."""
# expect: exit=2
import math

import torch
import torch.nn as nn


class LensAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, context_length):
        super().__init__()
        d = embed_dim // num_heads
        self.W_Q = nn.Parameter(torch.randn(num_heads, embed_dim, d) / math.sqrt(embed_dim))
        self.W_K = nn.Parameter(torch.randn(num_heads, embed_dim, d) / math.sqrt(embed_dim))
        self.W_V = nn.Parameter(torch.randn(num_heads, embed_dim, d) / math.sqrt(embed_dim))
        self.W_O = nn.Parameter(torch.randn(num_heads, d, embed_dim) / math.sqrt(d))
        self.register_buffer("IGNORE", torch.tensor(float("-inf")))

    def forward(self, x):
        T = x.shape[1]
        q = torch.einsum("btc,hcd->bthd", x, self.W_Q)
        k = torch.einsum("btc,hcd->bthd", x, self.W_K)
        v = torch.einsum("btc,hcd->bthd", x, self.W_V)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(q.shape[-1])  # [B, H, T, T]
        future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        scores = scores.masked_fill(future, self.IGNORE)
        pattern = scores.softmax(dim=-1)
        z = torch.einsum("bhqk,bkhd->bqhd", pattern, v)  # [B, T, H, d]
        return torch.einsum("bqhd,hdc->bqc", z, self.W_O)
