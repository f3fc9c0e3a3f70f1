"""Broken on purpose: nn.MultiheadAttention given tril as a bool mask; there True means
"blocked", so every token is kept from its past and shown its future."""
# expect: item=5 mistake=-
import torch
from torch import nn


class Wrapped(nn.Module):
    def __init__(self, embed_dim, num_heads, context_length):
        super().__init__()
        self.attn = nn.MultiheadAttention(embed_dim, num_heads, bias=False, batch_first=True)

    def forward(self, x):
        T = x.shape[1]
        keep = torch.tril(torch.ones(T, T, dtype=torch.bool))
        return self.attn(x, x, x, attn_mask=keep, need_weights=False)[0]
