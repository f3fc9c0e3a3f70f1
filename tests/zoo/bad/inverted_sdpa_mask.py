"""Broken on purpose: SDPA with the upper triangle as the mask."""
# expect: item=5 mistake=mask_inverted
import torch
import torch.nn as nn
import torch.nn.functional as F


class Head(nn.Module):
    def __init__(self, embed_dim, head_size, context_length):
        super().__init__()
        self.q_proj = nn.Linear(embed_dim, head_size, bias=False)
        self.k_proj = nn.Linear(embed_dim, head_size, bias=False)
        self.v_proj = nn.Linear(embed_dim, head_size, bias=False)

    def forward(self, x):
        T = x.size(1)
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool))  # True = may attend (wrong triangle)
        return F.scaled_dot_product_attention(self.q_proj(x), self.k_proj(x), self.v_proj(x), attn_mask=mask)
