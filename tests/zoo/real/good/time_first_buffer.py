"""Correct: time first with no mask parameter: forward(x) with x [seq_len, batch, d_model], the
causal mask a registered buffer, as older seq2seq code (and nn.Transformer's default layout)
lays out its input."""
# expect: pass
import math

import torch
import torch.nn as nn


class TimeFirstAttention(nn.Module):
    def __init__(self, d_model, n_heads, max_len):
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        self.register_buffer("causal", torch.tril(torch.ones(max_len, max_len, dtype=torch.bool)))

    def forward(self, x):
        T, B, C = x.shape  # time first
        d = C // self.n_heads
        q, k, v = self.qkv(x).chunk(3, dim=-1)  # [T, B, C] each

        def heads(t):
            return t.reshape(T, B, self.n_heads, d).permute(1, 2, 0, 3)  # [B, H, T, d]

        q, k, v = heads(q), heads(k), heads(v)
        scores = q @ k.transpose(-2, -1) / math.sqrt(d)  # [B, H, T, T]
        scores = scores.masked_fill(~self.causal[:T, :T], float("-inf"))
        y = torch.softmax(scores, dim=-1) @ v  # [B, H, T, d]
        y = y.permute(2, 0, 1, 3).reshape(T, B, C)  # [T, B, C]
        return self.out(y)
