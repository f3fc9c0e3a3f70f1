"""Broken on purpose: projections nested in a ModuleDict (attn.proj.query/key/value) and an
nn.Sequential (to_out.0), with the key and value layers used in each other's role."""
# expect: item=2
import math

import torch
import torch.nn as nn


class Projections(nn.Module):
    def __init__(self, embed_dim):
        super().__init__()
        self.proj = nn.ModuleDict(
            {name: nn.Linear(embed_dim, embed_dim, bias=False) for name in ("query", "key", "value")}
        )


class DeepAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, context_length):
        super().__init__()
        self.num_heads = num_heads
        self.attn = Projections(embed_dim)
        self.to_out = nn.Sequential(nn.Linear(embed_dim, embed_dim), nn.Dropout(0.0))

    def forward(self, x):
        B, T, C = x.shape
        H, d = self.num_heads, C // self.num_heads
        p = self.attn.proj
        q, k, v = (p[n](x).view(B, T, H, d).transpose(1, 2) for n in ("query", "value", "key"))
        wei = q @ k.transpose(-2, -1) / math.sqrt(d)  # [B, H, T, T]
        future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        wei = torch.softmax(wei.masked_fill(future, float("-inf")), dim=-1)
        y = (wei @ v).transpose(1, 2).reshape(B, T, C)
        return self.to_out(y)
