"""Correct: forward(x, use_mask=False) masks the future when the flag is on."""
# expect: pass
import torch
from torch import nn
import torch.nn.functional as F


class MHA(nn.Module):
    def __init__(self, d_model, n_heads, max_len):
        super().__init__()
        self.h = n_heads
        self.wq = nn.Linear(d_model, d_model)
        self.wk = nn.Linear(d_model, d_model)
        self.wv = nn.Linear(d_model, d_model)
        self.wo = nn.Linear(d_model, d_model)
        self.register_buffer("tri", torch.tril(torch.ones(max_len, max_len)))

    def forward(self, x, use_mask=False):
        B, T, C = x.shape
        q, k, v = (w(x).view(B, T, self.h, -1).transpose(1, 2) for w in (self.wq, self.wk, self.wv))
        s = q @ k.transpose(-2, -1) / (C // self.h) ** 0.5
        if use_mask:
            s = s.masked_fill(self.tri[:T, :T] == 0, float("-inf"))
        y = F.softmax(s, dim=-1) @ v
        return self.wo(y.transpose(1, 2).reshape(B, T, C))
