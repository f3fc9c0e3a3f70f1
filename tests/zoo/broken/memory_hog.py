"""Allocates far more memory than the audit allows."""
import torch
import torch.nn as nn


class AttentionHead(nn.Module):
    def __init__(self, embed_dim, head_size, context_length):
        super().__init__()
        self.table = torch.zeros(2**34)
