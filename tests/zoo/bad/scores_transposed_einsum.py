"""Broken on purpose: einsum with the query and key letters swapped (S transposed)."""
# expect: item=3 mistake=scores_transposed
import torch
from torch import nn


class CausalHead(nn.Module):
    def __init__(self, d_in, d_out, context_length):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=False)
        self.W_key = nn.Linear(d_in, d_out, bias=False)
        self.W_value = nn.Linear(d_in, d_out, bias=False)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        n = x.shape[1]
        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = torch.einsum("btd,bsd->bts", keys, queries)
        scores.masked_fill_(self.mask.bool()[:n, :n], -torch.inf)
        weights = torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1)
        return torch.einsum("bts,bsd->btd", weights, values)
