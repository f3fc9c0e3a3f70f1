"""Broken on purpose: rasbt-style einsum multi-head attention (bare nn.Parameter Q/K/V, an
nn.Linear out_proj) whose scores are not divided by sqrt(d_head)."""
# expect: item=4
import math

import torch
import torch.nn as nn


class MHAEinsum(nn.Module):
    def __init__(self, embed_dim, num_heads, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        self.d_out = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.W_query = nn.Parameter(torch.randn(embed_dim, embed_dim))
        self.W_key = nn.Parameter(torch.randn(embed_dim, embed_dim))
        self.W_value = nn.Parameter(torch.randn(embed_dim, embed_dim))
        self.out_proj = nn.Linear(embed_dim, embed_dim)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.kaiming_uniform_(self.W_query, a=math.sqrt(5))
        nn.init.kaiming_uniform_(self.W_key, a=math.sqrt(5))
        nn.init.kaiming_uniform_(self.W_value, a=math.sqrt(5))

    def forward(self, x):
        b, n, _ = x.shape
        Q = torch.einsum("bnd,di->bni", x, self.W_query)
        K = torch.einsum("bnd,di->bni", x, self.W_key)
        V = torch.einsum("bnd,di->bni", x, self.W_value)
        Q = Q.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)  # [B, H, T, d]
        K = K.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
        V = V.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
        scores = torch.einsum("bhnd,bhmd->bhnm", Q, K)
        mask = self.mask[:n, :n].unsqueeze(0).unsqueeze(1).expand(b, self.num_heads, n, n)
        scores = scores.masked_fill(mask.bool(), -torch.inf)
        attn_weights = torch.softmax(scores, dim=-1)
        attn_weights = self.dropout(attn_weights)
        context_vec = torch.einsum("bhnm,bhmd->bhnd", attn_weights, V)
        context_vec = context_vec.transpose(1, 2).reshape(b, n, self.d_out)
        return self.out_proj(context_vec)
