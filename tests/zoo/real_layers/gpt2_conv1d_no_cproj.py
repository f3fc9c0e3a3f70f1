"""Broken on purpose: Hugging Face GPT-2 style with Conv1D layers, but the merged heads are
returned without the output projection c_proj."""
# expect: item=8
import math

import torch
import torch.nn as nn


class Conv1D(nn.Module):
    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.empty(nx, nf))
        self.bias = nn.Parameter(torch.zeros(nf))
        nn.init.normal_(self.weight, std=0.02)

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


class GPT2Attention(nn.Module):
    def __init__(self, embed_dim, num_heads, context_length):
        super().__init__()
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.c_attn = Conv1D(3 * embed_dim, embed_dim)
        mask = torch.tril(torch.ones(context_length, context_length, dtype=torch.bool))
        self.register_buffer("bias", mask.view(1, 1, context_length, context_length))

    def _split_heads(self, tensor):
        new_shape = tensor.size()[:-1] + (self.num_heads, self.head_dim)
        return tensor.view(new_shape).permute(0, 2, 1, 3)  # [B, H, T, d]

    def _merge_heads(self, tensor):
        tensor = tensor.permute(0, 2, 1, 3).contiguous()  # [B, T, H, d]
        return tensor.view(tensor.size()[:-2] + (self.embed_dim,))

    def _attn(self, query, key, value):
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        attn_weights = attn_weights / math.sqrt(value.size(-1))
        T = query.size(-2)
        causal_mask = self.bias[:, :, :T, :T]
        mask_value = torch.finfo(attn_weights.dtype).min
        attn_weights = torch.where(causal_mask, attn_weights, torch.full_like(attn_weights, mask_value))
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        return torch.matmul(attn_weights, value)

    def forward(self, hidden_states):
        query, key, value = self.c_attn(hidden_states).split(self.embed_dim, dim=2)
        query = self._split_heads(query)
        key = self._split_heads(key)
        value = self._split_heads(value)
        attn_output = self._attn(query, key, value)
        attn_output = self._merge_heads(attn_output)
        return attn_output
