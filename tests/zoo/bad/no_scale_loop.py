"""Broken on purpose: per-head Python loop over slices, never scaled."""
# expect: item=4 mistake=no_scale
import torch
import torch.nn as nn


class LoopMHA(nn.Module):
    def __init__(self, embed_dim, num_heads, context_length):
        super().__init__()
        self.h = num_heads
        self.q = nn.Linear(embed_dim, embed_dim, bias=False)
        self.k = nn.Linear(embed_dim, embed_dim, bias=False)
        self.v = nn.Linear(embed_dim, embed_dim, bias=False)
        self.o = nn.Linear(embed_dim, embed_dim, bias=False)

    def forward(self, x):
        B, T, C = x.shape
        d = C // self.h
        Q, K, V = self.q(x), self.k(x), self.v(x)
        future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        outs = []
        for i in range(self.h):
            q, k, v = (t[:, :, i * d:(i + 1) * d] for t in (Q, K, V))
            s = torch.matmul(q, k.transpose(1, 2))
            s = s.masked_fill(future, float("-inf"))
            outs.append(torch.softmax(s, dim=-1) @ v)
        return self.o(torch.cat(outs, dim=-1))
