"""Correct: a small Transformer's MultiHeadAttention(config, is_causal=False), q/k/v in a
ModuleList, SDPA with is_causal taken from the flag."""
# expect: pass
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class TransformerConfig:
    def __init__(self, vocab_size=1000, n_embd=64, n_heads=4, block_size=128, dropout=0.1, bias=False):
        self.vocab_size = vocab_size
        self.n_embd = n_embd
        self.n_heads = n_heads
        self.block_size = block_size
        self.dropout = dropout
        self.bias = bias


class MultiHeadAttention(nn.Module):
    def __init__(self, config, is_causal=False):
        super().__init__()
        assert config.n_embd % config.n_heads == 0
        self.c_attns = nn.ModuleList([nn.Linear(config.n_embd, config.n_embd, bias=config.bias) for _ in range(3)])
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.attn_dropout = nn.Dropout(config.dropout)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.n_head = config.n_heads
        self.n_embd = config.n_embd
        self.dropout = config.dropout
        self.is_causal = is_causal
        self.flash = hasattr(torch.nn.functional, "scaled_dot_product_attention")
        if not self.flash:
            self.register_buffer("bias", torch.tril(torch.ones(config.block_size, config.block_size))
                                 .view(1, 1, config.block_size, config.block_size))

    def forward(self, query, key, value):
        B, T, C = query.size()
        q, k, v = [self.c_attns[i](x) for i, x in zip(range(3), (query, key, value))]
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        if self.flash:
            y = torch.nn.functional.scaled_dot_product_attention(
                q, k, v, attn_mask=None, dropout_p=self.dropout if self.training else 0, is_causal=self.is_causal)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            if self.is_causal:
                att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            att = self.attn_dropout(att)
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        y = self.resid_dropout(self.c_proj(y))
        return y
