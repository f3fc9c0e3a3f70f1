"""Constructor takes one argument instead of (embed_dim, head_size, context_length)."""
import torch.nn as nn


class AttentionHead(nn.Module):
    def __init__(self, embed_dim):
        super().__init__()
        self.query = nn.Linear(embed_dim, embed_dim)

    def forward(self, x):
        return x
