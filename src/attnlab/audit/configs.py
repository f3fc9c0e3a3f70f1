"""Config objects for constructors that take one (``CausalSelfAttention(config)``).

The learner's own config class comes first, when the file defines one (a class named
``*Config``/``*Args``/``*Cfg``: ``@dataclass class GPTConfig``, a plain class with attributes):
an instance with every size field replaced by the auditor's and its other fields at their
defaults. Next comes :class:`LessonConfig`, which answers every common attribute name.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any

from attnlab.audit.param_names import (
    CONTEXT,
    DROPOUT,
    EMBED,
    HEAD_COUNTS,
    HEAD_SIZE,
    KV_HEADS,
    OUT_DIM,
    meaning,
    parameters,
)


class LessonConfig:
    """A configuration object with every common attribute name for the sizes, dropout 0 and
    the usual defaults of GPT-2-style code.

    An attribute it does not know raises ``AttributeError`` naming the attribute and the ones
    it has (``getattr(config, name, default)`` still gets its default): a silent made-up value
    could build a different module than the learner's own config does.

    Args:
        sizes: the symbols' values (:func:`values`).
    """

    def __init__(self, sizes: dict[str, int]) -> None:
        C, H, T = sizes["C"], sizes["H"], sizes["T"]
        fields: dict[str, Any] = {name: C for name in EMBED - {"c", "width", "embed"}}
        fields |= {name: H for name in HEAD_COUNTS - {"h"}}
        fields |= {name: sizes.get("KV", H) for name in KV_HEADS}
        fields |= {name: C // max(H, 1) for name in HEAD_SIZE}
        fields |= {name: T for name in CONTEXT - {"t", "context"}}
        fields |= {name: 0.0 for name in DROPOUT - {"p", "drop"}}
        fields |= {name: C for name in OUT_DIM}
        fields |= {
            "bias": True, "qkv_bias": False, "n_layer": 1, "num_hidden_layers": 1,
            "vocab_size": 64, "layer_norm_epsilon": 1e-5, "layer_norm_eps": 1e-5,
            "output_attentions": False, "scale_attn_weights": True,
            "scale_attn_by_inverse_layer_idx": False, "reorder_and_upcast_attn": False,
            "add_cross_attention": False, "is_decoder": True, "use_cache": False,
            "_attn_implementation": "eager", "attn_implementation": "eager",
            "is_causal": True, "causal": True, "flash": False,
        }  # fmt: skip
        self.__dict__.update(fields)
        self._shown = {"n_embd": C, "n_head": H, "block_size": T, "dropout": 0.0}

    def __getattr__(self, name: str) -> Any:
        known = ", ".join(sorted(k for k in self.__dict__ if not k.startswith("_"))[:12])
        raise AttributeError(
            f"the auditor's config has no attribute {name!r} (it has {known}, ...); "
            f'say its value with --init "{name}=..." or audit a factory function'
        )

    def __getitem__(self, name: str) -> Any:  # dict-style configs: cfg["emb_dim"]
        try:
            return getattr(self, name)
        except AttributeError as exc:
            raise KeyError(str(exc)) from None

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.__dict__

    def get(self, name: str, default: Any = None) -> Any:
        return self.__dict__.get(name, default)

    def describe(self) -> str:
        """What it holds, in short: ``config(n_embd=4, n_head=2, block_size=8, dropout=0.0,
        ...)`` (each size also under its other names)."""
        return "config(" + ", ".join(f"{k}={v!r}" for k, v in self._shown.items()) + ", ...)"


def _file_configs(target: Callable[..., Any]) -> list[type]:
    """The config classes the learner's code means: the class its config parameter is
    annotated with (``def __init__(self, args: LMConfig)``), else the classes named
    ``*Config``/``*Args``/``*Cfg`` in the target's namespace that come from the learner's own
    files (its file, or a sibling module it imports: ``from .LMConfig import LMConfig``), never
    a library's (``transformers.PretrainedConfig``); a subclass before its base."""
    code = target if inspect.isfunction(target) else getattr(target, "__init__", None)
    namespace = getattr(code, "__globals__", {})
    annotated = _annotated(code, namespace)
    if annotated is not None:
        return [annotated]
    own = getattr(target, "__module__", None)
    code_file = getattr(getattr(code, "__code__", None), "co_filename", None)
    home = _folder(own) or (_folder_of(code_file) if code_file else None)
    found = [
        value
        for name, value in namespace.items()
        if isinstance(value, type)
        and name.lower().endswith(("config", "args", "cfg"))
        and (value.__module__ == own or (home is not None and _folder(value.__module__) == home))
    ]
    return sorted(found, key=lambda cls: -len(cls.__mro__))  # a subclass before its base


def _annotated(code: Any, namespace: dict[str, Any]) -> type | None:
    """The class the config parameter is annotated with, when it is one (a string annotation
    is looked up in the file's namespace)."""
    from attnlab.audit.param_names import is_config

    params = parameters(code) if code is not None else None
    for p in params or []:
        if not is_config([p.name]):
            continue
        hint = p.annotation
        if hint is p.empty:
            continue
        if isinstance(hint, str):
            hint = namespace.get(hint.strip("'\""))
        if isinstance(hint, type) and hint.__module__ not in ("builtins", "typing"):
            return hint
    return None


def _folder(module: str | None) -> str | None:
    """The folder of a module's file: the learner's own files share one (or one package)."""
    import sys

    if module is None:
        return None
    file = getattr(sys.modules.get(module), "__file__", None)
    return None if file is None else _folder_of(file)


def _folder_of(file: str) -> str:
    from pathlib import Path

    here = Path(file).resolve().parent
    while (here / "__init__.py").exists() and here.parent != here:  # a package: its root's
        here = here.parent
    return str(here)


def _file_config(cls: type, sizes: dict[str, int]) -> tuple[Any, str] | None:
    """An instance of the learner's config class with the sizes set, and the call that makes
    it as text; None when a required field means nothing the auditor can fill."""
    params = parameters(cls) or []
    kwargs: dict[str, Any] = {}
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        value = _sized(p.name, sizes)
        if isinstance(value, bool) and not isinstance(p.default, bool):
            value = None  # a causal flag only where the field is a flag
        if value is not None:
            kwargs[p.name] = value
        elif p.default is not p.empty:
            continue
        elif p.name.lower() == "vocab_size":  # attention never reads it; the class needs one
            kwargs[p.name] = 64
        else:
            return None
    try:
        config = cls(**kwargs)
    except Exception:  # the learner's class: anything may go wrong; the generic one is next
        return None
    names = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set()
    names |= {n for n in dir(config) if not n.startswith("_")}
    shown = dict(kwargs)
    for name in sorted(names - set(kwargs)):  # fields and attributes its constructor skips
        value = _sized(name, sizes)
        if isinstance(value, bool) and not isinstance(getattr(config, name, None), bool):
            value = None
        if value is not None:
            try:
                setattr(config, name, value)
            except (AttributeError, TypeError, dataclasses.FrozenInstanceError):
                return None
            shown[name] = value
    text = ", ".join(f"{k}={v!r}" for k, v in shown.items())
    return config, f"{cls.__name__}({text})"


def _sized(name: str, sizes: dict[str, int]) -> int | float | bool | None:
    what = meaning(name)
    if what in sizes:
        return sizes[what]
    if what in ("causal_on", "causal_off"):
        return what == "causal_on"
    return 0.0 if what == "dropout" else None


def configs(
    target: Callable[..., Any], sizes: dict[str, int], settings: dict[str, Any] | None = None
) -> list[tuple[Any, str]]:
    """The config objects to try, in order, each with its text: the learner's own config
    classes, then :class:`LessonConfig`; ``settings`` (from ``--init``) are set on each."""
    own = [c for cls in _file_configs(target) if (c := _file_config(cls, sizes)) is not None]
    generic = LessonConfig(sizes)
    found = [*own, (generic, generic.describe())]
    kept = []
    for config, text in found:
        try:
            for name, value in (settings or {}).items():
                setattr(config, name, value)
        except (AttributeError, TypeError, dataclasses.FrozenInstanceError):
            continue
        told = ", ".join(f"{k}={v!r}" for k, v in (settings or {}).items())
        kept.append((config, f"{text[:-1]}, {told})" if told else text))
    return kept
