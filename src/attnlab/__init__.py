"""attnlab: Week 7 of the MiniGPT course, a hands-on lab for causal self-attention.

The pieces, in the order the lesson builds them:

* :mod:`attnlab.core.example`: the fixed example (vocabulary, prompts A/B, X, W_Q, W_K, W_V,
W_vocab).
* :mod:`attnlab.core.pipeline`: the one attention code path, every stage named as in the lesson.
* :mod:`attnlab.core.modules`: ``AttentionHead``, ``MultiHeadAttention``, ``CausalSelfAttention``.
* :mod:`attnlab.core.convert`: copy weights between them and into ``nn.MultiheadAttention``.

The names below are loaded on first use (PEP 562), so ``import attnlab`` alone does not import
torch: the ``attnlab`` command starts in a fraction of a second, and ``attnlab audit`` imports
torch only in the process that runs the learner's code.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers and editors see; at run time __getattr__ loads them
    from attnlab.core.modules import AttentionHead as AttentionHead
    from attnlab.core.modules import CausalSelfAttention as CausalSelfAttention
    from attnlab.core.modules import MultiHeadAttention as MultiHeadAttention
    from attnlab.core.pipeline import attend as attend
    from attnlab.core.pipeline import attention_stages as attention_stages
    from attnlab.core.pipeline import lesson_stages as lesson_stages
    from attnlab.core.pipeline import multi_head_stages as multi_head_stages

__version__ = "0.1.0"

#: Public name → the module that defines it.
_HOMES = {
    "AttentionHead": "attnlab.core.modules",
    "CausalSelfAttention": "attnlab.core.modules",
    "MultiHeadAttention": "attnlab.core.modules",
    "attend": "attnlab.core.pipeline",
    "attention_stages": "attnlab.core.pipeline",
    "lesson_stages": "attnlab.core.pipeline",
    "multi_head_stages": "attnlab.core.pipeline",
}

__all__ = ["__version__", *sorted(_HOMES)]


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'attnlab' has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name]), name)
