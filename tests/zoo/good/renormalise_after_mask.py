"""Correct: softmax over every key, then zero the future and divide each row by what is left.

Mathematically the same weights as masking before the softmax."""
import math

import torch
from torch import nn


class AttentionHead(nn.Module):
    def __init__(self, embed_dim, head_size, context_length):
        super().__init__()
        self.query = nn.Linear(embed_dim, head_size, bias=False)
        self.key = nn.Linear(embed_dim, head_size, bias=False)
        self.value = nn.Linear(embed_dim, head_size, bias=False)
        self.register_buffer("lower", torch.tril(torch.ones(context_length, context_length)))

    def forward(self, x):
        T = x.size(1)
        q, k, v = self.query(x), self.key(x), self.value(x)
        full = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(q.size(-1)), dim=-1)
        kept = full * self.lower[:T, :T]
        return (kept / kept.sum(dim=-1, keepdim=True)) @ v
