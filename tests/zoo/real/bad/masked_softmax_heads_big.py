"""Broken on purpose: batch first, a required 0/1 mask filled with -1e9, softmax over the heads axis
(dim=1 of the scores [B, H, T, T]) instead of the keys."""
# expect: item=6 mistake=-
import math

import torch
import torch.nn as nn


class MaskedSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads, max_seq_len):
        super().__init__()
        self.n_heads = n_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=False)
        self.k_proj = nn.Linear(d_model, d_model, bias=False)
        self.v_proj = nn.Linear(d_model, d_model, bias=False)
        self.o_proj = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x, mask):
        B, T, C = x.shape
        d = C // self.n_heads

        def heads(t):
            return t.view(B, T, self.n_heads, d).transpose(1, 2)  # [B, H, T, d]

        q, k, v = heads(self.q_proj(x)), heads(self.k_proj(x)), heads(self.v_proj(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(d)  # [B, H, T, T]
        scores = scores.masked_fill(mask == 0, -1e9)
        out = torch.softmax(scores, dim=1) @ v  # [B, H, T, d]
        return self.o_proj(out.transpose(1, 2).reshape(B, T, C))
