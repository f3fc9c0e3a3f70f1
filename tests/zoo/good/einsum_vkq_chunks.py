"""Correct: one fused projection chunked as value, key, query (a valid learned layout), einsum
for the scores and the weighted sum."""
import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self, dim, heads, max_seq):
        super().__init__()
        self.heads = heads
        self.to_qkv = nn.Linear(dim, dim * 3, bias=False)
        self.to_out = nn.Linear(dim, dim, bias=False)

    def forward(self, x):
        b, n, dim = x.shape
        h = self.heads
        v, k, q = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = (t.reshape(b, n, h, dim // h) for t in (q, k, v))
        dots = torch.einsum("bihd,bjhd->bhij", q, k) * (dim // h) ** -0.5
        dots = dots.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
        out = torch.einsum("bhij,bjhd->bihd", dots.softmax(dim=-1), v)
        return self.to_out(out.reshape(b, n, dim))
