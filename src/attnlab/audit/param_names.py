"""What a constructor parameter's name means, for building a learner's class by meaning.

Used by both processes: the learner's builds with :mod:`~attnlab.audit.construct`, the judge
reads a target's kind from the same names (:func:`kind_of`). Case does not matter. Imports
neither torch nor the learner's file.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable
from typing import Any

#: Names of the embedding size C.
EMBED = {
    "embed_dim", "embedding_dim", "embed_size", "embd_dim", "emb_dim", "d_model", "n_embd",
    "n_embed", "n_emb", "hidden_size", "hidden_dim", "dim", "model_dim", "d_in", "in_dim",
    "dim_in", "input_dim", "in_features", "d_emb", "c", "n_state", "embed",
    "num_hiddens", "key_size", "query_size", "value_size",
}  # fmt: skip
#: Names of the output width: C for a multi-head module, the head size for one head.
OUT_DIM = {"d_out", "out_dim", "dim_out", "output_dim", "out_features"}
#: Names of the number of heads.
HEAD_COUNTS = {
    "num_heads", "num_head", "n_head", "n_heads", "heads", "nhead", "nheads", "h",
    "head_num", "heads_num", "num_attention_heads", "n_heads_attn", "n_attn_heads",
}  # fmt: skip
#: Names of the number of key/value heads (grouped-query attention, LLaMA's ``n_kv_heads``):
#: the head count H unless a build asks for fewer (:func:`values`).
KV_HEADS = {
    "n_kv_heads", "n_kv_head", "num_key_value_heads", "num_kv_heads", "kv_heads", "n_kv",
    "num_kv", "n_query_groups", "num_query_groups", "n_kv_groups", "num_kv_groups",
}  # fmt: skip
#: Names of one head's size.
HEAD_SIZE = {
    "head_size", "head_dim", "d_head", "dim_head", "d_k", "dk", "d_kv", "head_dims",
    "headsize", "size_per_head", "kv_channels", "d_v", "dv", "d_q", "d_values", "d_keys",
}  # fmt: skip
#: Names of the context length (the longest T the module must take).
CONTEXT = {
    "context_length", "context_len", "context_size", "context", "block_size", "max_len",
    "max_length", "n_positions", "max_position_embeddings", "max_seq_len", "max_seq_length",
    "max_seq", "seq_len", "seq_length", "max_positions", "n_ctx", "ctx_len", "t", "max_t",
    "max_tokens",
}  # fmt: skip
#: Names of a dropout probability: set to 0.0.
DROPOUT = {
    "dropout", "dropout_rate", "dropout_p", "dropout_prob", "drop_rate", "drop", "p",
    "p_drop", "attn_pdrop", "resid_pdrop", "embd_pdrop", "attn_dropout", "attention_dropout",
    "resid_dropout", "proj_dropout", "attn_drop", "proj_drop", "attn_drop_rate",
    "attention_probs_dropout_prob", "hidden_dropout_prob", "attn_dropout_p",
}  # fmt: skip
#: Names of a bias flag: False when the parameter has no default.
BIAS = {"bias", "qkv_bias", "use_bias", "add_bias", "proj_bias"}
#: Names of a single configuration object.
CONFIG = {"config", "cfg", "conf", "args", "params", "hparams", "model_args", "hp", "settings"}
#: Names of a flag that turns the causal mask on (``is_causal=False`` by default in a module that
#: serves as encoder and decoder): the auditor sets it to True.
CAUSAL_ON = {
    "is_causal", "causal", "use_causal_mask", "causal_mask", "use_mask", "mask", "masked",
    "apply_mask", "mask_future", "is_decoder", "decoder", "autoregressive", "use_causal",
    "is_autoregressive", "causal_attention", "future_mask", "look_ahead_mask",
}  # fmt: skip
#: Names of a flag that turns the causal mask off: the auditor sets it to False.
CAUSAL_OFF = {"bidirectional", "is_encoder", "encoder", "no_mask", "unmasked", "non_causal"}
#: The symbols an ``--init`` value may use.
SYMBOLS = {"C": "embedding size", "H": "heads", "D": "head size", "T": "context length"}


class Symbol(str):
    """An ``--init`` value that names a size (C, H, D or T), resolved at each build."""


def parse_init(text: str | None) -> dict[str, Any]:
    """``"d_model=C, h=H, dropout=0.1"`` → ``{"d_model": Symbol("C"), "h": Symbol("H"), ...}``.

    Args:
        text: comma-separated ``name=value`` pairs; a value is C, H, D, T, or a Python literal
            (int, float, bool, None, quoted string).

    Returns:
        The pairs in order; ``{}`` for ``None`` or blank text.

    Raises:
        ValueError: a pair is malformed; the message names the pair and what was expected.
    """
    found: dict[str, Any] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        name, sep, value = (s.strip() for s in part.partition("="))
        if not sep or not name.isidentifier():
            raise ValueError(f"--init expects name=value pairs (e.g. d_model=C, h=H), got {part!r}")
        if value in SYMBOLS:
            found[name] = Symbol(value)
            continue
        try:
            found[name] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            raise ValueError(
                f"--init {name}= expects C, H, D, T or a number, bool or quoted string, "
                f"got {value!r}"
            ) from None
    return found


def parameters(target: Callable[..., Any]) -> list[inspect.Parameter] | None:
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return None
    return [p for p in sig.parameters.values() if p.name != "self"]


def _named(params: list[str]) -> list[str]:
    return [p.lower() for p in params]


def is_config(params: list[str]) -> bool:
    """One configuration object carries every size (``CausalSelfAttention(config)``)."""
    return any(p in CONFIG for p in _named(params))


def kind_of(params: list[str] | None) -> str | None:
    """``"multihead"`` when the names give a head count or a config, ``"head"`` when they give
    a head size and no head count, else None (the names do not tell)."""
    names = _named(params or [])
    if is_config(names) or HEAD_COUNTS & set(names):
        return "multihead"
    return "head" if HEAD_SIZE & set(names) else None


def values(
    params: list[str],
    kind: str,
    sizes: tuple[int, ...],
    init: dict[str, Any] | None = None,
) -> dict[str, int]:
    """The symbols' values at ``sizes`` = (C, head count or head size, T[, KV]): the second
    size is a head count when the names say multi-head (or ``init`` uses H, or else ``kind``
    says so), a head size otherwise; the key/value head count KV is H unless a fourth size
    gives it (a grouped-query build)."""
    C, second, T = sizes[:3]
    given = {v for v in (init or {}).values() if isinstance(v, Symbol)}
    by_init = "multihead" if "H" in given else "head" if "D" in given else None
    if (kind_of(params) or by_init or kind) == "multihead":
        kv = sizes[3] if len(sizes) > 3 else second
        return {"C": C, "H": second, "D": C // max(second, 1), "T": T, "OUT": C, "KV": kv}
    return {"C": C, "H": 1, "D": second, "T": T, "OUT": second, "KV": 1}


def meaning(name: str) -> str | None:
    """The symbol a parameter name maps to (``"C"``, ``"OUT"``, ``"H"``, ``"KV"``, ``"D"``,
    ``"T"``),
    ``"dropout"``, ``"bias"``, ``"config"``, ``"causal_on"``/``"causal_off"`` (a flag that
    chooses the causal path, :data:`CAUSAL_ON`) or None."""
    low = name.lower()
    tables = (
        (EMBED, "C"), (OUT_DIM, "OUT"), (HEAD_COUNTS, "H"), (KV_HEADS, "KV"), (HEAD_SIZE, "D"),
        (CONTEXT, "T"),
        (DROPOUT, "dropout"), (BIAS, "bias"), (CONFIG, "config"),
        (CAUSAL_ON, "causal_on"), (CAUSAL_OFF, "causal_off"),
    )  # fmt: skip
    return next((what for table, what in tables if low in table), None)
