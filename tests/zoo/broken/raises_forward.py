"""Raises in forward (a NameError)."""
import torch.nn as nn


class AttentionHead(nn.Module):
    def __init__(self, embed_dim, head_size, context_length):
        super().__init__()
        self.query = nn.Linear(embed_dim, head_size, bias=False)

    def forward(self, x):
        return self.query(x) @ keys.transpose(-2, -1)  # noqa: F821
