"""Correct: a module two packages deep, with a relative import of its package's neighbour."""
# expect: pass
import math

import torch
import torch.nn as nn

from ..utils import CfgNode


class Attention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = CfgNode(**config.__dict__) if isinstance(config, CfgNode) else config
        self.n_head = config.n_head
        self.qkv = nn.Linear(config.n_embd, 3 * config.n_embd, bias=False)
        self.proj = nn.Linear(config.n_embd, config.n_embd, bias=False)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, -1).transpose(1, 2) for t in (q, k, v))
        att = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # [B, H, T, T]
        causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
        att = att.masked_fill(~causal, float("-inf")).softmax(dim=-1)
        return self.proj((att @ v).transpose(1, 2).reshape(B, T, C))
