"""Broken on purpose: the head looks its input up as token IDs."""
# expect: item=1 mistake=token_ids_as_x
import math

import torch
import torch.nn as nn


class AttentionHead(nn.Module):
    def __init__(self, embed_dim, head_size, context_length):
        super().__init__()
        self.embed = nn.Embedding(5, embed_dim)
        self.query = nn.Linear(embed_dim, head_size, bias=False)
        self.key = nn.Linear(embed_dim, head_size, bias=False)
        self.value = nn.Linear(embed_dim, head_size, bias=False)

    def forward(self, token_ids):
        x = self.embed(token_ids)
        T = x.size(1)
        q, k, v = self.query(x), self.key(x), self.value(x)
        s = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
        s = s.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float("-inf"))
        return torch.softmax(s, -1) @ v
