"""Correct: forward(x, is_causal=False) passes the flag to SDPA; a GPT calls it with True."""
# expect: pass
import torch
from torch import nn
import torch.nn.functional as F


class FlagAttention(nn.Module):
    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x, is_causal=False):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_heads, -1).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=is_causal)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))
