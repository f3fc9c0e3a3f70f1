"""attnlab: Week 7 of the MiniGPT course, a hands-on lab for causal self-attention.

The pieces, in the order the lesson builds them:

* :mod:`attnlab.example`: the fixed example (vocabulary, prompts A/B, X, W_Q, W_K, W_V, W_vocab).
* :mod:`attnlab.pipeline`: the one attention code path, every stage named as in the lesson.
* :mod:`attnlab.modules`: ``AttentionHead``, ``MultiHeadAttention``, ``CausalSelfAttention``.
* :mod:`attnlab.convert`: copy weights between them and into ``nn.MultiheadAttention``.
"""

from attnlab.modules import AttentionHead, CausalSelfAttention, MultiHeadAttention
from attnlab.pipeline import attend, attention_stages, lesson_stages, multi_head_stages

__version__ = "0.1.0"

__all__ = [
    "AttentionHead",
    "CausalSelfAttention",
    "MultiHeadAttention",
    "__version__",
    "attend",
    "attention_stages",
    "lesson_stages",
    "multi_head_stages",
]
