"""Broken on purpose: einsum head that never masks the future."""
# expect: item=5 mistake=no_mask
import torch
from torch import nn


class CausalHead(nn.Module):
    def __init__(self, d_in, d_out, context_length):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=False)
        self.W_key = nn.Linear(d_in, d_out, bias=False)
        self.W_value = nn.Linear(d_in, d_out, bias=False)

    def forward(self, x):
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = torch.einsum("btd,bsd->bts", q, k) / k.shape[-1] ** 0.5
        return torch.einsum("bts,bsd->btd", scores.softmax(dim=-1), v)
