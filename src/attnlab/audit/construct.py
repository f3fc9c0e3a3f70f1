"""Build the learner's class the way its author meant it: constructor arguments by meaning.

The lesson builds ``AttentionHead(embed_dim, head_size, context_length)`` and
``MultiHeadAttention(embed_dim, num_heads, context_length)``; learners' classes come with their
own signatures. :func:`arguments` reads the constructor's parameter names and maps each one by
what it means (case does not matter):

* embedding size C: ``embed_dim``, ``d_model``, ``n_embd``, ``d_in``, ``hidden_size``, ``dim``,
  ... (``EMBED``); ``d_out``-style names (``OUT_DIM``) are C for a multi-head module and
  the head size for a single head;
* head count H: ``num_heads``, ``n_head``, ``h``, ``heads``, ... (``HEAD_COUNTS``);
* head size D: ``head_size``, ``d_head``, ``d_k``, ``head_dim``, ... (``HEAD_SIZE``),
  C // H in a multi-head module;
* context length T: ``context_length``, ``block_size``, ``max_len``, ``n_positions``, ...
  (``CONTEXT``);
* dropout probabilities (``DROPOUT``) are 0.0; a bias flag without default is False;
* a flag that chooses the causal path (``is_causal``, ``causal``, ``is_decoder``, ...:
  ``CAUSAL_ON``) is True, one that turns it off (``bidirectional``...) False, when its default
  is a bool or it has none: a module written for encoder and decoder is audited as the decoder
  it is in a GPT (the "built as" line shows ``is_causal=True``);
* a ``config``/``cfg``/``args`` parameter (``CONFIG``) gets a config object: an instance of
  the learner's own config class when the file defines one (``@dataclass class GPTConfig``, a
  plain ``class ...Config``) with the sizes replaced and its other fields at their defaults,
  else a :class:`~attnlab.audit.configs.LessonConfig` (:mod:`~attnlab.audit.configs`);
* every other parameter with a default keeps its default.

A name-mapped parameter is set even when it has a default (the auditor builds at its own sizes).
A required parameter no rule maps is never guessed from its position: the build stops with one
line naming it and how to say it, an ``--init "a=C, b=H, c=T"`` option
(:func:`~attnlab.audit.param_names.parse_init`:
integers, floats, booleans, quoted strings, or the symbols C, H, D, T) or a factory function.

The name tables are in :mod:`~attnlab.audit.param_names`, which the judge also reads a target's
kind from (:func:`~attnlab.audit.param_names.kind_of`). Imports neither torch nor the learner's
file.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any

from attnlab.audit.configs import configs
from attnlab.audit.param_names import (
    CONTEXT,
    DROPOUT,
    EMBED,
    HEAD_COUNTS,
    HEAD_SIZE,
    OUT_DIM,
    SYMBOLS,
    Symbol,
    is_config,
    kind_of,
    meaning,
    parameters,
    parse_init,
    values,
)

__all__ = [
    "CONTEXT", "DROPOUT", "EMBED", "HEAD_COUNTS", "HEAD_SIZE", "OUT_DIM", "SYMBOLS",
    "BuildError", "Plan", "arguments", "is_config", "kind_of", "parse_init",
]  # fmt: skip


class BuildError(Exception):
    """The constructor cannot be called by meaning; ``zh``/``en`` say which parameter and how
    to name it. The learner's process turns it into a build failure (exit code 2)."""

    def __init__(self, zh: str, en: str) -> None:
        super().__init__(en)
        self.zh, self.en = zh, en


def _unmapped(name: str, params: list[inspect.Parameter], target_name: str) -> BuildError:
    listed = ", ".join(p.name for p in params)
    say = ", ".join(f"{p.name}=?" for p in params if p.default is p.empty)
    return BuildError(
        f"无法判断 {target_name}({listed}) 的参数 {name} 是什么：审计器按名字识别 embed_dim/"
        f"d_model/n_embd、num_heads/n_head/h、head_size、context_length/block_size、dropout "
        f'或单个 config；请用 --init "{say}" 说明（C 嵌入维度，H 头数，D 每头维度，T 上下文'
        f"长度），或审计一个工厂函数",
        f"cannot tell what parameter {name} of {target_name}({listed}) means: expected names "
        f"such as embed_dim/d_model/n_embd, num_heads/n_head/h, head_size, "
        f'context_length/block_size, dropout or one config; say it with --init "{say}" '
        f"(C embedding size, H heads, D head size, T context length) or audit a factory function",
    )


@dataclasses.dataclass
class Plan:
    """How to call a constructor: ``args``/``kwargs``, and when it takes a config object, the
    parameter's name and the objects to try in turn (:func:`configs`)."""

    args: list[Any]
    kwargs: dict[str, Any]
    order: list[str]
    config_slot: str | None = None
    configs: list[tuple[Any, str]] = dataclasses.field(default_factory=list)

    def text(self, name: str, config: str | None = None) -> str:
        """The call as Python: ``Name(6, 3, 8)`` when the first (up to three) parameters got
        integers in order, else with keywords (``Name(d_in=6, ..., dropout=0.0)``);
        ``config`` is the text of the config object passed, if any."""
        keys = list(self.kwargs)
        plain = (
            not self.args
            and len(keys) <= 3
            and keys == self.order[: len(keys)]
            and all(type(v) is int for v in self.kwargs.values())
        )
        parts = [repr(a) for a in self.args]
        if plain:
            parts += [repr(v) for v in self.kwargs.values()]
            if self.config_slot is not None and config is not None:
                parts.append(f"{self.config_slot}={config}")
            return f"{name}({', '.join(parts)})"
        given = dict(self.kwargs)
        if self.config_slot is not None and config is not None:
            given[self.config_slot] = _Text(config)
        ordered = [k for k in self.order if k in given] + [k for k in given if k not in self.order]
        parts += [f"{k}={given[k]!r}" for k in ordered]
        return f"{name}({', '.join(parts)})"


class _Text(str):
    """Text shown as itself in a call (a config object's constructor call)."""

    def __repr__(self) -> str:
        return str(self)


def arguments(
    target: Callable[..., Any],
    kind: str,
    sizes: tuple[int, int, int],
    init: dict[str, Any] | None = None,
) -> Plan:
    """How to call ``target`` at ``sizes``, each parameter by the meaning of its name.

    Args:
        target: the learner's class or factory.
        kind: ``"head"`` or ``"multihead"``, for names that do not tell (``d_out``).
        sizes: (C, head count or head size, T).
        init: ``--init`` values (:func:`parse_init`); they win over the names. When the
            constructor takes a config object, names that are not its parameters are set on
            the config.

    Returns:
        The :class:`Plan`; a config parameter, if any, is left out of its ``kwargs``.

    Raises:
        BuildError: a required parameter means nothing the auditor knows and ``init`` does
            not name it, ``init`` names a parameter the constructor lacks, or the names give
            no embedding size or no head count/size.
    """
    params = parameters(target)
    name = getattr(target, "__name__", "target")
    if params is None:
        raise BuildError(
            f"读不出 {name} 的构造参数：请审计一个工厂函数 make(embed_dim, num_heads, "
            f"context_length)",
            f"cannot read the parameters of {name}: expected a class or function with named "
            f"parameters, found none to read; audit a factory make(embed_dim, num_heads, "
            f"context_length)",
        )
    init = dict(init or {})
    names = [p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    takes_any = any(p.kind == p.VAR_KEYWORD for p in params)
    has_config = any(meaning(n) == "config" for n in names)
    extra = [n for n in init if n not in names and not takes_any]
    if extra and not has_config:
        raise BuildError(
            f"--init 给了 {extra[0]}，但 {name} 的参数是 ({', '.join(names)})",
            f"--init names {extra[0]}, expected one of {name}'s parameters, "
            f"found ({', '.join(names)})",
        )
    sized = values(names, kind, sizes, init)
    told = bool(init)
    plan = Plan([], {}, names)
    covered: set[str] = set()
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        what = meaning(p.name)
        if p.name in init:
            value = init.pop(p.name)
            value = sized[value] if isinstance(value, Symbol) else value
        elif what in sized:
            value = sized[what]
            covered.add(what)
        elif what == "dropout":
            value = 0.0
        elif what == "config" and plan.config_slot is None:
            plan.config_slot = p.name
            covered |= {"C", "H"}
            continue
        elif what == "bias" and p.default is p.empty:
            value = False
        elif what in ("causal_on", "causal_off") and (
            isinstance(p.default, bool) or p.default is p.empty
        ):
            value = what == "causal_on"
        elif p.default is not p.empty:
            continue
        else:
            raise _unmapped(p.name, params, name)
        if p.kind == p.POSITIONAL_ONLY:
            plan.args.append(value)
        else:
            plan.kwargs[p.name] = value
    if plan.config_slot is not None:  # the other names are the config's attributes
        settings = {k: sized[v] if isinstance(v, Symbol) else v for k, v in init.items()}
        plan.configs = configs(target, sized, settings)
    else:
        plan.kwargs.update(init)  # what a **kwargs parameter takes
    if not told and not ({"C"} & covered and {"H", "D", "OUT"} & covered):
        listed = ", ".join(names)
        lacks = ("嵌入维度", "embedding size") if "C" not in covered else ("头数或每头维度",
                 "head count or head size")  # fmt: skip
        raise BuildError(
            f"签名不对：应能以 (embed_dim, head_size|num_heads, context_length) 这类参数构造，"
            f"实际参数是 ({listed})：没有参数给出{lacks[0]}（可用 --init 或工厂函数说明）",
            f"wrong signature: expected (embed_dim, head_size|num_heads, context_length) or "
            f"parameters with such meanings, found ({listed}): none gives the {lacks[1]} "
            f"(name it with --init or audit a factory function)",
        )
    return plan
