"""Correct, but with projection names the auditor does not know: black-box checks only."""
import math

import torch
from torch import nn


class Reader(nn.Module):
    def __init__(self, embed_dim, head_size, context_length):
        super().__init__()
        self.ask = nn.Linear(embed_dim, head_size, bias=False)
        self.offer = nn.Linear(embed_dim, head_size, bias=False)
        self.payload = nn.Linear(embed_dim, head_size, bias=False)

    def forward(self, x):
        T = x.shape[1]
        s = self.ask(x) @ self.offer(x).transpose(-2, -1) / math.sqrt(self.ask.out_features)
        s = s.masked_fill(torch.ones(T, T).triu(1).bool(), float("-inf"))
        return s.softmax(-1) @ self.payload(x)
