"""Correct, but chatty: prints while importing and writes more than a pipe buffer to fd 1."""
import math
import os

import torch
import torch.nn as nn

print("loading my attention head...")


class AttentionHead(nn.Module):
    def __init__(self, embed_dim, head_size, context_length):
        super().__init__()
        self.query = nn.Linear(embed_dim, head_size, bias=False)
        self.key = nn.Linear(embed_dim, head_size, bias=False)
        self.value = nn.Linear(embed_dim, head_size, bias=False)

    def forward(self, x):
        print("x.shape =", x.shape)
        os.write(1, b"." * 70_000)
        T = x.size(1)
        q, k, v = self.query(x), self.key(x), self.value(x)
        s = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
        s = s.masked_fill(~torch.tril(torch.ones(T, T, dtype=torch.bool)), float("-inf"))
        return s.softmax(dim=-1) @ v
