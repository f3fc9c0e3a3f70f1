"""Correct: nn.MultiheadAttention itself, published as is: time first (batch_first=False),
called with query, key and value and an attn_mask."""
# expect: pass call=additive_inf
from torch import nn


class TorchMHA(nn.MultiheadAttention):
    pass
