"""Broken on purpose: rasbt-style wrapper around nn.MultiheadAttention followed by one more
linear layer proj, but the mask is built and never passed: every position reads the future."""
# expect: item=5
import torch
import torch.nn as nn


class MHAPyTorchClass(nn.Module):
    def __init__(self, embed_dim, num_heads, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        self.context_length = context_length
        self.multihead_attn = nn.MultiheadAttention(
            embed_dim=embed_dim, num_heads=num_heads, dropout=dropout, bias=qkv_bias,
            add_bias_kv=qkv_bias, batch_first=True,
        )
        self.proj = nn.Linear(embed_dim, embed_dim)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool())

    def forward(self, x):
        T = x.shape[1]
        attn_mask = self.mask[:T, :T]
        attn_output, _ = self.multihead_attn(x, x, x, need_weights=False)
        return self.proj(attn_output)
