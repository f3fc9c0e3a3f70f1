"""Crashes the interpreter in forward (reads address 0)."""
import ctypes

import torch.nn as nn


class AttentionHead(nn.Module):
    def __init__(self, embed_dim, head_size, context_length):
        super().__init__()

    def forward(self, x):
        ctypes.string_at(0)
        return x
