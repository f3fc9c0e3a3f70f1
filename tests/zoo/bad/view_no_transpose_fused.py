"""Broken on purpose: HF-style q_proj/k_proj/v_proj, heads split with view straight to [B, nh, T, hs]."""
# expect: item=8 mistake=split_without_transpose
import math

import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    def __init__(self, hidden_size, num_heads, max_positions):
        super().__init__()
        self.num_heads = num_heads
        self.q_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.k_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.v_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.o_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, hidden_states):
        B, T, C = hidden_states.size()
        hs = C // self.num_heads
        q = self.q_proj(hidden_states).view(B, self.num_heads, T, hs)
        k = self.k_proj(hidden_states).view(B, self.num_heads, T, hs)
        v = self.v_proj(hidden_states).view(B, self.num_heads, T, hs)
        att = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(hs)
        causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
        att = torch.where(causal, att, torch.finfo(att.dtype).min)
        y = torch.softmax(att, dim=-1) @ v
        return self.o_proj(y.transpose(1, 2).reshape(B, T, C))
