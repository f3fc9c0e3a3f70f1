"""Broken on purpose: nn.MultiheadAttention wrapper that forgets attn_mask."""
# expect: item=5 mistake=no_mask
import torch.nn as nn


class Wrapped(nn.Module):
    def __init__(self, embed_dim, num_heads, context_length):
        super().__init__()
        self.mha = nn.MultiheadAttention(embed_dim, num_heads, batch_first=True)

    def forward(self, x):
        return self.mha(x, x, x, need_weights=False)[0]
