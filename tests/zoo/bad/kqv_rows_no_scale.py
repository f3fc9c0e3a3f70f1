"""Broken on purpose: a fused layer read as k, q, v (fine), but the scores are never scaled."""
# expect: item=4 mistake=no_scale
import torch
from torch import nn


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.n_head = n_head
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.register_buffer("tri", torch.tril(torch.ones(block_size, block_size)))

    def forward(self, x):
        B, T, C = x.shape
        k, q, v = self.c_attn(x).split(C, dim=2)
        k, q, v = (t.view(B, T, self.n_head, -1).transpose(1, 2) for t in (k, q, v))
        att = (q @ k.transpose(-2, -1)).masked_fill(self.tri[:T, :T] == 0, float("-inf"))
        y = att.softmax(dim=-1) @ v
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))
