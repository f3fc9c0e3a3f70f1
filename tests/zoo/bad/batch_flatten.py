"""Broken on purpose. item=9 mistake=batch_mixed"""
# expect: item=9 mistake=batch_mixed
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class AttentionHead(nn.Module):
    def __init__(self, embed_dim, head_size, context_length):
        super().__init__()
        self.query = nn.Linear(embed_dim, head_size, bias=False)
        self.key = nn.Linear(embed_dim, head_size, bias=False)
        self.value = nn.Linear(embed_dim, head_size, bias=False)
        self.register_buffer("causal_mask", torch.tril(torch.ones(context_length, context_length, dtype=torch.bool)))

    def forward(self, x):
        B, T, C = x.shape
        mask = self.causal_mask[:T, :T]
        q, k, v = self.query(x), self.key(x), self.value(x)
        d = q.size(-1)
        q2, k2, v2 = q.reshape(B * T, d), k.reshape(B * T, d), v.reshape(B * T, d)
        scores = q2 @ k2.T / math.sqrt(d)
        big = torch.tril(torch.ones(B * T, B * T, dtype=torch.bool))
        scores = scores.masked_fill(~big, float("-inf"))
        return (torch.softmax(scores, dim=-1) @ v2).reshape(B, T, d)
