"""Correct, with a part the auditor cannot read: nn.Linear query/key/value it loads, but a
TransformerLens-style per-head W_O [H, d_head, C] applied with einsum. The reference would
leave W_O out, so the output check cannot decide: exit 2, never 0 (nor a FAIL it cannot back)."""
# expect: exit=2
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
        wei = q @ k.transpose(-2, -1) / math.sqrt(C // H)  # [B, H, T, T]
        wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf")).softmax(dim=-1)
        z = wei @ v  # [B, H, T, d]
        return torch.einsum("bhtd,hdc->btc", z, self.W_O)
