"""Find a learner module's projections, whatever they are called, and load or read them.

A *layer* here is an ``nn.Linear``, an ``nn.LazyLinear`` (given its parameters by one forward
in the learner's process before the auditor looks), or a layer of the learner's own class
that computes ``x @ W + b`` with ``W`` stored ``[in, out]`` (Hugging Face GPT-2's ``Conv1D``)
or ``x @ Wᵀ + b`` (:mod:`~attnlab.audit.layers` tells them apart by running them). A layer's
role comes from its full dotted name (:func:`~attnlab.audit.names.role_of_path`), at any depth:
``query``, ``heads.0.key``, ``query.linear`` (a wrapper module per role), ``attn.proj.value``,
``to_out.0``, ``attn.c_proj``.

Recognised layouts:

* separate layers for the query, key and value, named ``query``/``key``/``value``,
  ``W_query``/``W_key``/``W_value``, ``q_proj``/``k_proj``/``v_proj``, ``q``/``k``/``v``... either
  one per role or one per head (``heads[h].query``), head h owning features
  ``h*d_head:(h+1)*d_head``;
* one fused layer ``C → 3·width`` (``c_attn``, ``qkv``...; an ``nn.Linear`` or GPT-2's
  ``Conv1D``): output blocks Q, K, V in the order the module's own forward uses them (found by
  :mod:`~attnlab.audit.context`);
* an ``nn.MultiheadAttention`` (``in_proj_weight``, ``out_proj``);
* bare ``nn.Parameter`` matrices with those names (``Wq``, ``W_query``...), used as ``x @ W``
  (``[C, width]``) or, when stored ``[width, C]``, as ``nn.Linear`` stores its weight; with
  other names, their roles are read from what the forward computes
  (:func:`~attnlab.audit.bare.param_candidates`);
* for a multi-head module, an output projection ``C → C``: a layer or a bare matrix
  (``output_projection``, ``out_proj``, ``c_proj``, ``proj``, ``W_O``, ``to_out.0``...), also
  next to bare Q/K/V matrices (rasbt's einsum MHA: ``W_query`` parameters and an ``nn.Linear``
  ``out_proj``); once W_O is found, a square layer no layout reads (``proj`` after an
  ``nn.MultiheadAttention``) is loaded as the identity (:func:`load`).

Roles are read from names first; only layers whose names say nothing get their roles from what
the forward computes, and a layer named for one role is never read as another. What no
layout reads stays unread: the items that need it are NOT CHECKED and the output check
decides (:mod:`~attnlab.audit.overall`).

Weights are exchanged in the lesson's formula convention ``[C, width]`` (``q = x @ w_q``).
"""

from __future__ import annotations

import itertools
import re
from typing import cast

import torch
from torch import nn

from attnlab.audit.bare import by_params, param_candidates, param_layout
from attnlab.audit.layers import Layout, Projection, Weights, projections, set_weight, weight
from attnlab.audit.layers import zero_bias as _zero_bias
from attnlab.audit.names import ROLES, fits, role_of_path

__all__ = [
    "ORDERS", "Layout", "Weights", "by_names", "by_params", "candidates", "find_layout",
    "interleaved", "load", "param_candidates", "read", "regroup",
]  # fmt: skip


def _natural(name: str) -> list[object]:
    return [int(p) if p.isdecimal() else p for p in re.split(r"(\d+)", name)]


def _linears(module: nn.Module) -> list[tuple[str, Projection]]:
    return projections(module)


def _role_layout(linears: list[tuple[str, Projection]], C: int, width: int) -> Layout | None:
    groups = {
        r: sorted(
            (n for n, m in linears if role_of_path(n) == r and m.in_features == C), key=_natural
        )
        for r in ROLES
    }
    by_name = dict(linears)
    counts = {len(g) for g in groups.values()}
    if len(counts) != 1 or 0 in counts:
        return None
    layers = {r: [by_name[n] for n in g] for r, g in groups.items()}
    if any(sum(m.out_features for m in ls) != width for ls in layers.values()):
        return None
    every = [m for ls in layers.values() for m in ls]

    def read() -> Weights:
        q, k, v = (torch.cat([weight(m) for m in layers[r]], dim=1) for r in "qkv")
        return q, k, v, None

    def write(w: Weights) -> None:
        for role, full in zip("qkv", w[:3], strict=True):
            start = 0
            for m in layers[role]:
                set_weight(m, full[:, start : start + m.out_features])
                start += m.out_features
        _zero_bias(every)

    names = "/".join(groups[r][0] for r in "qkv")
    more = f" (×{len(groups['q'])} heads)" if len(groups["q"]) > 1 else ""
    layout = Layout(f"{names}{more}", read, write, any(m.bias is not None for m in every))
    layout.roles = tuple(groups[r][0] for r in "qkv")
    return layout


def _fused_layout(
    linears: list[tuple[str, Projection]], C: int, width: int, order: tuple[int, ...]
) -> Layout | None:
    """One fused ``nn.Linear(C, 3·width)`` (or Conv1D); ``order[r]`` is the block of outputs
    role r (q, k, v) takes: ``(1, 0, 2)`` reads ``k, q, v = c_attn(x).split(C, 2)``."""
    found = [(n, m) for n, m in linears if m.in_features == C and m.out_features == 3 * width]
    named = [(n, m) for n, m in found if role_of_path(n) == "qkv"]
    if len(named or found) != 1:
        return None
    name, layer = (named or found)[0]

    def read() -> Weights:
        blocks = weight(layer).split(width, dim=1)  # each [C, width]
        return blocks[order[0]], blocks[order[1]], blocks[order[2]], None

    def write(w: Weights) -> None:
        qkv = w[:3]
        blocks = [qkv[order.index(b)] for b in range(3)]
        set_weight(layer, torch.cat(blocks, dim=1))  # [C, 3·width]
        _zero_bias([layer])

    rows = ", ".join("qkv"[order.index(b)] for b in range(3))
    layout = Layout(
        f"{name} (fused; your {name} rows are {rows})", read, write, layer.bias is not None
    )
    layout.order = order
    return layout


def _mha_layout(module: nn.Module, C: int) -> Layout | None:
    found = [(n, m) for n, m in module.named_modules() if isinstance(m, nn.MultiheadAttention)]
    if len(found) != 1 or not found[0][1]._qkv_same_embed_dim or found[0][1].embed_dim != C:
        return None
    name, mha = found[0]

    def read() -> Weights:
        q, k, v = mha.in_proj_weight.split(C, dim=0)
        return q.T, k.T, v.T, mha.out_proj.weight.T

    def write(w: Weights) -> None:
        mha.in_proj_weight.copy_(torch.cat([t.T for t in w[:3]], dim=0))
        if w[3] is not None:
            mha.out_proj.weight.copy_(w[3].T)
        if mha.in_proj_bias is not None:
            mha.in_proj_bias.zero_()
        _zero_bias([mha.out_proj])

    return Layout(
        f"{name or 'self'} (nn.MultiheadAttention)", read, write, mha.in_proj_bias is not None
    )


def _with_output(
    base: Layout, linears: list[tuple[str, Projection]], C: int, used: set[str]
) -> Layout:
    square = [(n, m) for n, m in linears if m.in_features == C == m.out_features and n not in used]
    named = [(n, m) for n, m in square if role_of_path(n) == "o"]
    pick = named or square
    if len(pick) != 1:
        return base
    name, layer = pick[0]

    def read() -> Weights:
        q, k, v, _ = base.read()
        return q, k, v, weight(layer)

    def write(w: Weights) -> None:
        base.write(w)
        if w[3] is not None:
            set_weight(layer, w[3])
        _zero_bias([layer])

    desc = f"{base.description}, W_O = {name}"
    has_bias = base.has_bias or layer.bias is not None
    return Layout(desc, read, write, has_bias, base.names, base.order, base.roles, base.spec)


#: The row orders a fused q/k/v layer may use, the lesson's first.
ORDERS = tuple(itertools.permutations(range(3)))


def find_layout(
    module: nn.Module, kind: str, C: int, width: int, order: tuple[int, ...] = (0, 1, 2)
) -> Layout | None:
    """The projections of ``module`` (``width`` = d_head for a head, C for a multi-head;
    ``order``: the q, k, v row blocks of a fused layer)."""
    if kind == "multihead":
        mha = _mha_layout(module, C)
        if mha is not None:
            return mha
    linears = _linears(module)
    base = _role_layout(linears, C, width) or _fused_layout(linears, C, width, order)
    if base is None:
        base = param_layout(module, C, width, kind)
        if base is None or kind == "head" or (base.spec or {}).get("o") is not None:
            return base
    if kind == "head":
        return base
    used = {
        n for n, m in linears if role_of_path(n) not in (None, "o") or m.out_features == 3 * width
    }
    return _with_output(base, linears, C, used)


def candidates(
    module: nn.Module, kind: str, C: int, width: int
) -> list[tuple[str, str, str, str | None]]:
    """Ways to read unknown-named ``nn.Linear`` layers as (query, key, value, W_O), in order."""
    linears = [(n, m) for n, m in _linears(module) if m.in_features == C]
    pool = [n for n, m in linears if m.out_features == width]
    squares = [n for n, m in linears if m.out_features == C] if kind == "multihead" else []
    found: list[tuple[str, str, str, str | None]] = []
    for q, k, v in itertools.permutations(pool, 3):
        if not fits((q, k, v)):
            continue
        rest: list[str | None] = [o for o in squares if o not in (q, k, v) and fits((o,), "o")]
        found.extend((q, k, v, o) for o in (rest or [None]))
    return found[:24]


def by_names(module: nn.Module, names: tuple[str, str, str, str | None]) -> Layout:
    """The layout that reads layers ``names`` = (query, key, value, W_O or None)."""
    mods = dict(module.named_modules())
    q, k, v = (cast(Projection, mods[n]) for n in names[:3])
    o = cast(Projection, mods[names[3]]) if names[3] is not None else None
    every = [q, k, v] + ([o] if o is not None else [])

    def read() -> Weights:
        return weight(q), weight(k), weight(v), None if o is None else weight(o)

    def write(w: Weights) -> None:
        for layer, full in zip(every, w, strict=False):
            if full is not None:
                set_weight(layer, full)
        _zero_bias(every)

    described = "/".join(n for n in names if n is not None)
    return Layout(f"{described} (roles found by matching)", read, write, False, names)


def interleaved(C: int, heads: int) -> list[int]:
    """Feature order of heads that own interleaved features (``view(B, T, d, H)``): head h,
    dimension i is feature ``i·H + h``; listed in the lesson's order (head by head)."""
    return [i * heads + h for h in range(heads) for i in range(C // heads)]


def regroup(layout: Layout, perm: list[int]) -> Layout:
    """``layout`` read with head h, dimension i at feature ``perm[h·d + i]`` (the columns of
    W_Q, W_K, W_V and the rows of W_O)."""
    idx = torch.tensor(perm)
    inv = torch.argsort(idx)

    def read() -> Weights:
        q, k, v, o = layout.read()
        return q[:, idx], k[:, idx], v[:, idx], None if o is None else o[idx, :]

    def write(w: Weights) -> None:
        q, k, v, o = w
        layout.write((q[:, inv], k[:, inv], v[:, inv], None if o is None else o[inv, :]))

    described = f"{layout.description}; its heads own interleaved features"
    again = Layout(
        described, read, write, layout.has_bias, layout.names, layout.order, layout.roles
    )
    again.spec = layout.spec
    return again


def _unread(module: nn.Module, layout: Layout, w: Weights) -> list[tuple[str, Projection]]:
    """The square layers of ``module`` that ``layout`` does not write (it is given NaN weights
    to see which it writes; :func:`load` then writes the real ones)."""
    squares = [(n, m) for n, m in projections(module) if m.in_features == m.out_features]
    if squares:
        q, k, v = (torch.full(t.shape, float("nan")) for t in w[:3])
        o = None if w[3] is None else torch.full(w[3].shape, float("nan"))
        layout.write((q, k, v, o))
    return [(n, m) for n, m in squares if not bool(m.weight.isnan().any())]


def load(layout: Layout, w: Weights, module: nn.Module | None = None) -> list[str]:
    """Copy formula-convention weights into the module (float32), biases set to 0.

    Args:
        layout: where the module keeps its projections.
        w: W_Q, W_K, W_V and W_O (or None) in formula convention.
        module: the module itself; when given with a W_O, its square layers that no part of
            the layout reads (a second projection after W_O, as ``proj(multihead_attn(x))``)
            are set to the identity, so that the output is comparable with the reference.

    Returns:
        The names of the layers set to the identity (also added to ``layout.description``).
    """
    with torch.no_grad():
        q, k, v, o = w
        rest = _unread(module, layout, w) if module is not None and o is not None else []
        layout.write((q.float(), k.float(), v.float(), None if o is None else o.float()))
        for _, layer in rest:
            set_weight(layer, torch.eye(layer.in_features))
        _zero_bias([layer for _, layer in rest])
    names = [n for n, _ in rest]
    if names:
        layout.description += f"; {', '.join(names)} set to the identity"
    return names


def read(layout: Layout) -> Weights:
    """The module's own weights in formula convention, float64."""
    with torch.no_grad():
        q, k, v, o = layout.read()
        return q.double(), k.double(), v.double(), None if o is None else o.double()
