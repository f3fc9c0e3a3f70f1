"""Broken on purpose: SDPA given a *float* tril mask, which it adds to the scores (+1/+0)
instead of blocking the future. No catalogue mistake is exactly this; the mask check catches it."""
# expect: item=5 mistake=-
import torch
import torch.nn as nn
import torch.nn.functional as F


class Head(nn.Module):
    def __init__(self, embed_dim, head_size, context_length):
        super().__init__()
        self.query = nn.Linear(embed_dim, head_size, bias=False)
        self.key = nn.Linear(embed_dim, head_size, bias=False)
        self.value = nn.Linear(embed_dim, head_size, bias=False)
        self.register_buffer("mask", torch.tril(torch.ones(context_length, context_length)))

    def forward(self, x):
        T = x.size(1)
        q, k, v = self.query(x), self.key(x), self.value(x)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=self.mask[:T, :T])
