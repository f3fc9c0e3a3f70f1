"""Bare ``nn.Parameter`` matrices read as a module's projections (``x @ W``).

Learners who write the formula literally keep W_Q, W_K, W_V (and W_O) as parameters:
``self.W_query = nn.Parameter(torch.randn(d_in, d_out))`` (rasbt's einsum MHA), stored
``[C, width]`` and used as ``x @ W``, or stored ``[width, C]`` as ``nn.Linear`` stores its weight.
Named by role (:func:`~attnlab.audit.names.role_of_path`) they are read as such
(:func:`param_layout`); otherwise every way of reading them is listed
(:func:`param_candidates`) and the module's own forward decides. A multi-head's W_O may be a
bare matrix or a layer (an ``nn.Linear`` ``out_proj`` next to bare Q/K/V). Their biases
(``bias_q``, ``b_Q``..., the layer's own) are set to 0 with the weights, as the reference has
none.
"""

from __future__ import annotations

import itertools

import torch
from torch import nn

from attnlab.audit.layers import Conv1D, Layout, Projection, Weights, projections
from attnlab.audit.names import fits, role_of_path

#: Bare matrices read as roles: role ("q", "k", "v", "o") → (parameter name, stored [width, C]).
ParamSpec = dict[str, tuple[str, bool]]


def _bare(module: nn.Module, dims: int = 2) -> dict[str, nn.Parameter]:
    """The ``dims``-D parameters that belong to no recognised layer, by dotted name."""
    owned = {id(p) for _, m in projections(module) for p in m.parameters()}
    owned |= {
        id(p)
        for m in module.modules()
        if isinstance(m, nn.MultiheadAttention)
        for p in m.parameters()
    }
    return {n: p for n, p in module.named_parameters() if p.dim() == dims and id(p) not in owned}


def param_layout(module: nn.Module, C: int, width: int, kind: str) -> Layout | None:
    params = _bare(module)
    found: ParamSpec = {}
    for role in ("q", "k", "v", "o"):
        hits = [n for n in params if role_of_path(n) == role]
        if len(hits) == 1 and params[hits[0]].shape in ((C, width), (width, C)):
            found[role] = (hits[0], params[hits[0]].shape != (C, width))
    if not all(r in found for r in "qkv"):
        return None
    if kind != "multihead":
        found.pop("o", None)
    layout = by_params(module, found)
    layout.spec = None
    layout.roles = tuple(found[r][0] for r in "qkv")
    return layout


def _biases(module: nn.Module, found: ParamSpec) -> list[torch.Tensor]:
    """The bias of each parameter in ``found``: a 1-D parameter named for its role
    (``bias_q``, ``b_Q``, ``query_bias``), or the bias of the layer that owns it."""
    mods = dict(module.named_modules())
    owners = [mods.get(name.rpartition(".")[0]) for name, _ in found.values()]
    out: list[torch.Tensor] = [
        m.bias for m in owners if isinstance(m, Projection) and m.bias is not None
    ]
    for name, p in _bare(module, dims=1).items():
        parts = name.rsplit(".", 1)[-1].lower().split("_")
        rest = "_".join(x for x in parts if x not in ("bias", "b"))
        if {"bias", "b"} & set(parts) and role_of_path(rest) in found:
            out.append(p)
    return out


def by_params(module: nn.Module, found: ParamSpec) -> Layout:
    """The layout that reads bare matrices as the roles in ``found``, used as ``x @ W`` (their
    biases set to 0 when it loads weights)."""
    params = dict(module.named_parameters())
    roles = "qkvo" if "o" in found else "qkv"
    biases = _biases(module, found)

    def get(role: str) -> torch.Tensor:
        name, transposed = found[role]
        return params[name].T if transposed else params[name]

    def read() -> Weights:
        return get("q"), get("k"), get("v"), get("o") if "o" in roles else None

    def write(w: Weights) -> None:
        for role, full in zip(roles, w, strict=False):
            if full is not None:
                name, transposed = found[role]
                params[name].copy_(full.T if transposed else full)
        for bias in biases:
            bias.zero_()

    described = "/".join(found[r][0] for r in roles)
    layout = Layout(f"{described} (nn.Parameter, x @ W)", read, write, bool(biases))
    layout.spec = found
    return layout


def param_candidates(module: nn.Module, kind: str, C: int, width: int) -> list[ParamSpec]:
    """Ways to read unknown-named bare matrices as (query, key, value, W_O), at most 48."""
    params = _bare(module)
    ways = [(n, t) for n, p in params.items() for t in (False, True)
            if p.shape == ((width, C) if t else (C, width))]  # fmt: skip
    squares = [(n, t) for n, p in params.items() for t in (False, True) if p.shape == (C, C)]
    squares += [(f"{n}.weight", True) for n, m in projections(module) if m.in_features == C
                and m.out_features == C and not isinstance(m, Conv1D)]  # fmt: skip
    squares += [(f"{n}.weight", False) for n, m in projections(module)
                if isinstance(m, Conv1D) and m.in_features == C == m.out_features]  # fmt: skip
    found: list[ParamSpec] = []
    for q, k, v in itertools.permutations(ways, 3):
        if len({q[0], k[0], v[0]}) < 3 or not fits((q[0], k[0], v[0])):
            continue
        rest = [o for o in squares if o[0] not in (q[0], k[0], v[0]) and fits((o[0],), "o")]
        rest = rest if kind == "multihead" else []
        outs: list[tuple[str, bool] | None] = [*rest] or [None]
        found.extend({"q": q, "k": k, "v": v, **({"o": o} if o else {})} for o in outs)
    return found[:48]
