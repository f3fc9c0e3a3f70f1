"""Broken on purpose: blocked-style mask that fills the blocked scores with 0."""
# expect: item=5 mistake=-
import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self, embed_dim, head_size, block_size, dropout=0.2):
        super().__init__()
        self.query = nn.Linear(embed_dim, head_size, bias=False)
        self.key = nn.Linear(embed_dim, head_size, bias=False)
        self.value = nn.Linear(embed_dim, head_size, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        q, k, v = self.query(x), self.key(x), self.value(x)
        wei = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5  # [B, T, T]
        if mask is not None:
            wei = wei.masked_fill(mask, 0.0)
        wei = self.dropout(torch.softmax(wei, dim=-1))
        return wei @ v
