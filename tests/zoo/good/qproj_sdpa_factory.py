"""Correct: a factory function returning a q_proj/k_proj/v_proj head that uses SDPA."""
import torch.nn as nn
import torch.nn.functional as F


class _Head(nn.Module):
    def __init__(self, c, d):
        super().__init__()
        self.q_proj = nn.Linear(c, d, bias=False)
        self.k_proj = nn.Linear(c, d, bias=False)
        self.v_proj = nn.Linear(c, d, bias=False)

    def forward(self, x):
        return F.scaled_dot_product_attention(self.q_proj(x), self.k_proj(x), self.v_proj(x), is_causal=True)


def make_head(embed_dim, head_size, context_length):
    return _Head(embed_dim, head_size)
