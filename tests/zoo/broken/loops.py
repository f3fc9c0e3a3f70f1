"""Loops forever in forward."""
import torch.nn as nn


class AttentionHead(nn.Module):
    def __init__(self, embed_dim, head_size, context_length):
        super().__init__()

    def forward(self, x):
        while True:
            x = x + 0
