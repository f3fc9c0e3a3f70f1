"""Rotary position tables a learner's ``forward`` takes, made so that they change nothing.

LLaMA-style attention (llama2.c, minimind, happy-llm's chapter 5, Hugging Face's Llama) takes
its rotary positions as inputs: ``forward(x, freqs_cos, freqs_sin)``, ``forward(x, pos_cis)``,
``forward(x, freqs_cis)``, ``forward(hidden_states, position_embeddings=(cos, sin))``. The
lesson's reference has no positions, so the auditor gives tables of angle 0: cos 1 and sin 0
(a complex table 1 + 0i), under which a rotation leaves q and k as they are and the module
computes exactly the lesson's attention. Every checklist item is then judged on the lesson's
numbers; the rotation itself is not checked (the report says so, with the line that applies it).

The tables keep the layout the learner's code expects: where the file defines its own
precompute function (``precompute_freqs_cis``, ``precompute_pos_cis``...), its tables are made
with it at the call's head size and length and then set to angle 0; otherwise common layouts
are tried in turn (``[T, D/2]``, ``[T, D]``, ``[B, T, D]``...). Runs in the learner's process.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import torch

#: Parameter names (lower case) that carry position tables, beside any name containing one of
#: :data:`MARKS`.
NAMES = {
    "cos", "sin", "position_embeddings", "position_embedding", "sincos", "cos_sin", "sin_cos",
    "cos_sin_cache", "pe_cos", "pe_sin", "position_ids", "pos_ids",
}  # fmt: skip
MARKS = ("freq", "cis", "rope", "rotary")
#: Position indices (``position_ids``): all 0, so that the module's own rotary turns by 0.
INDICES = {"position_ids", "pos_ids"}
#: Words in a function's name that make it a precompute function for the tables.
PRECOMPUTE = ("freq", "cis", "rope", "rotary", "sincos", "precompute")
#: Parameter names of a precompute function: the head size, the length, the base.
DIM = {"dim", "head_dim", "d", "d_head", "rot_dim", "rotary_dim", "n_elem", "d_k", "head_size"}
LENGTH = {"end", "seq_len", "max_seq_len", "seqlen", "length", "t", "n_ctx", "max_len",
          "max_position_embeddings", "max_positions", "context_length", "block_size",
          "seq_length", "n"}  # fmt: skip


def is_position(name: str) -> bool:
    """``name`` is a forward parameter that carries rotary tables or position indices."""
    low = name.lower()
    return low in NAMES or any(m in low for m in MARKS)


def _neutral(t: Any, sine: bool) -> Any:
    """``t`` at angle 0: a complex table 1 + 0i, a sine table 0, a cosine table 1."""
    if isinstance(t, tuple | list):
        return type(t)(_neutral(v, i % 2 == 1) for i, v in enumerate(t))
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"expected a tensor, found {type(t).__name__}")
    if t.is_complex():
        return torch.ones_like(t)
    return torch.zeros_like(t) if sine else torch.ones_like(t)


def _sine(name: str, index: int) -> bool:
    low = name.lower()
    return "sin" in low and "cos" not in low if ("sin" in low or "cos" in low) else index == 1


def _precompute(namespace: dict[str, Any], path: Path) -> list[tuple[str, Callable[..., Any]]]:
    """The learner's precompute functions (defined in its own files), by name."""
    from attnlab.audit.configs import _folder_of

    home = _folder_of(str(path))
    found: list[tuple[str, Callable[..., Any]]] = []
    for name, value in namespace.items():
        code = getattr(value, "__code__", None)
        if not inspect.isfunction(value) or code is None:
            continue
        low = name.lower()
        named = any(w in low for w in PRECOMPUTE) and "apply" not in low
        if named and _folder_of(code.co_filename) == home:
            found.append((name, value))
    return found


def _call_precompute(fn: Callable[..., Any], D: int, T: int) -> tuple[Any, str] | None:
    """``fn`` called with the head size and the length by the meaning of its parameters (the
    first one is the head size, the second the length when their names do not say), and the
    call as text; None when a parameter means nothing known."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    kwargs: dict[str, Any] = {}
    plain = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    for i, p in enumerate(plain):
        low = p.name.lower()
        if low in DIM or (i == 0 and low not in LENGTH):
            kwargs[p.name] = D
        elif low in LENGTH or (i == 1 and p.default is p.empty):
            kwargs[p.name] = T
        elif p.default is p.empty:
            return None
    if D not in kwargs.values():
        return None
    try:
        made = fn(**kwargs)
    except Exception:  # the learner's function: it may not take these sizes
        return None
    text = f"{fn.__name__}({', '.join(f'{k}={v!r}' for k, v in kwargs.items())})"
    return made, text


def _assign(names: list[str], made: Any) -> dict[str, Any] | None:
    """The forward's position arguments from what a precompute function returned."""
    if len(names) == 1:
        return {names[0]: made}
    if isinstance(made, tuple | list) and len(made) == len(names):
        return dict(zip(names, made, strict=True))
    return None


def _shaped(names: list[str], B: int, T: int, D: int) -> Iterator[tuple[dict[str, Any], str]]:
    """Common layouts of angle-0 tables, when the file has no precompute function."""
    half = max(D // 2, 1)
    shapes = [(T, half), (T, D), (1, T, D), (B, T, D), (1, 1, T, D), (1, T, 1, half), (1, T, 1, D)]
    for shape in shapes:
        if len(names) == 1 and any(m in names[0].lower() for m in ("cis",)):
            table: Any = torch.ones(*shape, dtype=torch.complex64)
            yield {names[0]: table}, f"complex ones {list(shape)}"
            continue
        pair = (torch.ones(*shape), torch.zeros(*shape))
        if len(names) == 1:
            yield {names[0]: pair}, f"(cos, sin) of shape {list(shape)}"
        elif len(names) == 2:
            got = {n: pair[1] if _sine(n, i) else pair[0] for i, n in enumerate(names)}
            yield got, f"cos 1, sin 0 of shape {list(shape)}"


def choices(
    module: Any, names: list[str], B: int, T: int, D: int, path: Path
) -> Iterator[tuple[dict[str, Any], str, bool]]:
    """Keyword arguments for the position parameters ``names``, at angle 0, in the order to
    try, each with how it was made (text) and whether the file's own precompute function made
    it (then it is the only one tried). Position indices are all 0."""
    tables = [n for n in names if n.lower() not in INDICES]
    indices = {n: torch.zeros(B, T, dtype=torch.long) for n in names if n.lower() in INDICES}
    if not tables:
        yield indices, "position_ids = 0", True
        return
    namespace = getattr(type(module).forward, "__globals__", {})
    for _name, fn in _precompute(namespace, path):
        called = _call_precompute(fn, D, T)
        if called is None:
            continue
        given = _assign(tables, called[0])
        if given is None:
            continue
        try:
            zeroed = {n: _neutral(v, _sine(n, i)) for i, (n, v) in enumerate(given.items())}
        except TypeError:
            continue
        yield {**zeroed, **indices}, called[1], True
        return
    for made, text in _shaped(tables, B, T, D):
        yield {**made, **indices}, text, False


def used_at(module: Any, names: list[str]) -> int | None:
    """The first line of the learner's ``forward`` that reads one of ``names`` (where the
    rotation is applied), as a line of its file."""
    try:
        source, start = inspect.getsourcelines(type(module).forward)
        tree = ast.parse(textwrap.dedent("".join(source)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    body = tree.body[0]
    if not isinstance(body, ast.FunctionDef | ast.AsyncFunctionDef):
        return None
    lines = [
        node.lineno
        for stmt in body.body
        for node in ast.walk(stmt)
        if (isinstance(node, ast.Name) and node.id in names and isinstance(node.ctx, ast.Load))
        or (isinstance(node, ast.Attribute) and node.attr in names)
    ]
    return min(lines) + start - 1 if lines else None


#: Buffer names (the last part of the dotted name) that hold rotary tables, and how each is
#: set to angle 0: inverse frequencies and angles to 0, cosines to 1, sines to 0.
_ZERO_ANGLE = ("inv_freq", "freqs", "angles", "theta", "sin")


def neutralise(module: Any) -> list[str]:
    """Set the module's rotary buffers to angle 0 (``freqs_cis`` 1 + 0i, ``cos_cached`` 1,
    ``sin_cached`` 0, ``inv_freq`` 0: a rotary embedding inside the module then turns q and k
    by 0), and return their dotted names. A real buffer named for both (``freqs_cis`` holding
    cos and sin side by side) is left as it is: its layout cannot be told."""
    changed = []
    with torch.no_grad():
        for name, buf in module.named_buffers():
            last = name.rsplit(".", 1)[-1].lower()
            if not is_position(last) and last not in ("inv_freq", "cos_cached", "sin_cached"):
                continue
            if not buf.is_floating_point() and not buf.is_complex():
                continue
            if buf.is_complex():
                buf.copy_(torch.ones_like(buf))
            elif "cos" in last and "sin" not in last:
                buf.fill_(1.0)
            elif any(w in last for w in _ZERO_ANGLE) and not ("cos" in last or "cis" in last):
                buf.zero_()
            else:
                continue
            changed.append(name)
    return changed


#: Words in a called function's name that say it applies rotary positions.
_ROTARY_CALLS = ("rotate", "rotary", "rope", "sin", "cos", "polar")


def rotary_line(module: Any) -> int | None:
    """The first line of the learner's ``forward`` that calls something rotary
    (``rotate_half``, ``apply_rotary_emb``, ``self.rope(...)``, ``torch.polar``, ``.cos()``):
    positions computed inside the forward, which the auditor cannot set to angle 0."""
    try:
        source, start = inspect.getsourcelines(type(module).forward)
        tree = ast.parse(textwrap.dedent("".join(source)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    lines = []
    for node in ast.walk(tree.body[0]):
        if not isinstance(node, ast.Call):
            continue
        fn = node.func
        name = (
            fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else ""
        )
        if any(w in name.lower() for w in _ROTARY_CALLS):
            lines.append(node.lineno)
    return min(lines) + start - 1 if lines else None
