"""Correct: LLMs-from-scratch's first self-attention, bare nn.Parameter matrices used as x @ W,
plus the causal mask."""
import torch
from torch import nn


class CausalSelfAttentionV1(nn.Module):
    def __init__(self, d_in, d_out, context_length):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        queries, keys, values = x @ self.W_query, x @ self.W_key, x @ self.W_value
        n = x.shape[1]
        scores = queries @ keys.transpose(-1, -2)
        hidden = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
        scores = scores.masked_fill(hidden, -torch.inf)
        return torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1) @ values
