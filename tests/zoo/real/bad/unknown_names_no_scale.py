"""Broken on purpose: unknown constructor names given with --init, scores never scaled."""
# expect: item=4 mistake=no_scale init=a=C, b=H, c=T
import math

import torch
import torch.nn as nn


class Attn(nn.Module):
    def __init__(self, a, b, c):
        super().__init__()
        self.b = b
        self.qkv = nn.Linear(a, 3 * a, bias=False)
        self.out = nn.Linear(a, a, bias=False)
        self.register_buffer("tri", torch.tril(torch.ones(c, c)))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (t.view(B, T, self.b, C // self.b).transpose(1, 2) for t in (q, k, v))
        s = q @ k.transpose(-2, -1)
        s = s.masked_fill(self.tri[:T, :T] == 0, float("-inf"))
        y = torch.softmax(s, dim=-1) @ v
        return self.out(y.transpose(1, 2).reshape(B, T, C))
