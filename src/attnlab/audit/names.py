"""The names learners give their projection layers (compared in lower case).

:mod:`attnlab.audit.probe` finds a module's W_Q, W_K, W_V and W_O by these names first, and
by their shapes only when none matches. A layer's role is read from its full dotted name
(:func:`role_of_path`): ``query.linear`` (a wrapper module per role holding its layer),
``heads.0.key``, ``attn.proj.value``, ``to_out.0``, ``attn.c_proj``.
"""

from __future__ import annotations

#: Query, key and value layers: one per role, or one per head (``heads[h].query``).
ROLES = {
    "q": {
        "query",
        "q",
        "q_proj",
        "w_query",
        "w_q",
        "wq",
        "to_q",
        "q_linear",
        "queries",
        "query_proj",
        "linear_q",
        "q_layer",
        "query_layer",
        "w_qs",
        "q_lin",
    },
    "k": {
        "key",
        "k",
        "k_proj",
        "w_key",
        "w_k",
        "wk",
        "to_k",
        "k_linear",
        "keys",
        "key_proj",
        "linear_k",
        "k_layer",
        "key_layer",
        "w_ks",
        "k_lin",
    },
    "v": {
        "value",
        "v",
        "v_proj",
        "w_value",
        "w_v",
        "wv",
        "to_v",
        "v_linear",
        "values",
        "value_proj",
        "linear_v",
        "v_layer",
        "value_layer",
        "w_vs",
        "v_lin",
    },
}
#: Words that name a role anywhere in a leaf name split at "_" (``query_projection``).
WORDS = {"q": {"query", "queries"}, "k": {"key", "keys"}, "v": {"value", "values"}}


def role_of(leaf: str) -> str | None:
    """``"q"``, ``"k"`` or ``"v"`` when the lower-case leaf name says so, else None."""
    for role, names in ROLES.items():
        if leaf in names or len(WORDS[role] & set(leaf.split("_"))) == 1 == len(
            {r for r, w in WORDS.items() if w & set(leaf.split("_"))}
        ):
            return role
    return None


#: One fused layer ``nn.Linear(C, 3·width)``: rows Q, then K, then V.
FUSED = {"c_attn", "qkv", "in_proj", "qkv_proj", "w_qkv", "to_qkv", "qkv_linear", "attn"}
#: The output projection ``nn.Linear(C, C)`` of a multi-head module.
OUT = {
    "output_projection",
    "out_proj",
    "c_proj",
    "proj",
    "o_proj",
    "w_o",
    "wo",
    "out",
    "fc_out",
    "o",
    "output",
    "to_out",
    "w_out",
    "out_projection",
    "linear_out",
    "out_lin",
    "fc",
}


def role_of_path(name: str) -> str | None:
    """The role a layer's full dotted name gives it.

    Args:
        name: the layer's (or parameter's) dotted name, e.g. ``"query.linear"``.

    Returns:
        ``"q"``, ``"k"`` or ``"v"`` when the parts of the name that name a role all name that
        one (``query.linear``, ``heads.0.key``, ``blocks.attn.q_proj``); otherwise, when no part
        names a query, key or value, ``"o"`` or ``"qkv"`` for the part nearest the leaf that
        names an output projection (``to_out.0``, ``attn.c_proj``) or a fused layer
        (``attn.c_attn``); None when no part says, or the parts disagree (``query.key``).
    """
    parts = [p.lower() for p in name.split(".") if p and not p.isdigit()]
    named = {r for p in parts if (r := role_of(p)) is not None}
    if named:
        return named.pop() if len(named) == 1 else None
    for part in reversed(parts):
        if part in OUT:
            return "o"
        if part in FUSED:
            return "qkv"
    return None


def fits(names: tuple[str, ...], roles: str = "qkv") -> bool:
    """No name among ``names`` says another role than the one it would get (``roles``): a
    layer named ``key`` is never read as the query, whatever the output says."""
    return all(role_of_path(n) in (None, r) for n, r in zip(names, roles, strict=False))
