"""Calls os._exit in the constructor: no cleanup, no exception to catch."""
import os

import torch.nn as nn


class AttentionHead(nn.Module):
    def __init__(self, embed_dim, head_size, context_length):
        super().__init__()
        os._exit(7)
