"""Call the learner's forward the way its author meant it: inputs and the causal mask.

The judge reads the parameters of the module's ``forward`` (sent by the learner's process with
each build) and picks the call:

* ``forward(x)``, ``forward(hidden_states, ...)``: ``x`` alone, batch first unless only time
  first makes the module causal with its batch rows apart;
* ``forward(query, key, value, ...)``: ``x`` as query, key and value (self-attention);
* a mask parameter (a name with ``mask`` in it, not a padding or head mask; or d2l's
  ``valid_lens``): the causal mask in the module's own convention, found by probing. An
  optional ``attention_mask`` (Hugging Face's padding mask in GPT-2, the 4-D additive causal
  mask in Llama) is probed the same way, with no mask tried first. The
  candidates (:data:`STYLES` × :data:`SHAPES`) are tried in order on a random ``[2, 5, C]``
  input; the first under which the module runs, returns finite ``[B, T, ·]`` values, is causal
  (changing positions ≥ t never changes an output before t, for every t) and keeps batch rows
  apart is used for every call of the audit. When the mask has a default, calling without one
  is tried first.

A module may also take its input time first (``[T, B, C]``, labml): when no batch-first call
qualifies, the same candidates are tried on the transposed input (and a ``[T, T, 1]`` mask);
its output is turned back to ``[B, T, ·]``, and its intermediates, laid out differently, are
not read as the lesson's stages (:func:`attnlab.audit.remote.forward`).

A mask under which every query with a masked key gives NaN and only the last query a finite
output is the causal one, with weights normalised over another axis than the keys: item 6's
finding (:attr:`Convention.off_keys`). If no convention makes the module causal, the audit
goes on with the one nearest to causal (:func:`~attnlab.audit.call_probe.settle`) and
checklist item 5 judges the module as it is: it cannot pass. Any other required ``forward``
parameter stops the audit with one line naming it (exit code 2).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import torch

from attnlab.audit.loader import LearnerError
from attnlab.audit.param_names import meaning
from attnlab.audit.positions import is_position

QUERY = {"query", "q", "queries", "x_q", "xq", "q_input", "query_input"}
KEY = {"key", "k", "keys", "x_k", "xk", "k_input", "key_input"}
VALUE = {"value", "v", "values", "x_v", "xv", "v_input", "value_input"}
#: Mask names that, when optional, are Hugging Face's padding mask: the module masks the future
#: itself, so none is passed (a required one is probed like any mask).
PADDING = {"attention_mask", "encoder_attention_mask"}
#: Parameter names that give, per query, how many keys it may read (d2l's ``valid_lens``).
LENGTHS = {"valid_lens", "valid_len", "valid_length", "valid_lengths"}
#: Mask conventions, in the order tried: (name, zh, en).
STYLES = (
    ("keep_bool", "布尔，True = 可以关注（torch.tril）", "bool, True = may attend (torch.tril)"),
    ("keep_float", "0/1 浮点，1 = 可以关注", "0/1 float, 1 = may attend"),
    ("additive_inf", "加性，0 / -inf", "additive, 0 / -inf"),
    ("additive_big", "加性，0 / -1e9", "additive, 0 / -1e9"),
    ("blocked_bool", "布尔，True = 屏蔽（nn.MultiheadAttention 的 attn_mask）",
     "bool, True = blocked (nn.MultiheadAttention's attn_mask)"),
)  # fmt: skip
#: Mask shapes tried: [T, T], [1, T, T], [1, 1, T, T]; a time-first module also [T, T, 1].
SHAPES = ("TT", "1TT", "11TT")
TIME_FIRST_SHAPES = ("TT1", "TT", "1TT", "11TT")
#: (B, T) of the probing input.
PROBE_BT = (2, 5)


@dataclass(frozen=True)
class Convention:
    """One way to call ``forward``.

    Attributes:
        qkv: ``x`` is passed as query, key and value.
        mask_name: the mask parameter, if the forward has one.
        mask_at: its position, when it can only be passed positionally.
        optional: the mask parameter has a default.
        style: the mask passed (a :data:`STYLES` name, or ``"lengths"``); None: no mask.
        dims: the mask's shape: ``T`` for the positions, ``1`` for a broadcast axis.
        time_first: the module takes ``[T, B, C]`` and returns ``[T, B, ·]``.
        causal: probing found the module causal under this convention.
        off_keys: this causal mask showed weights normalised over another axis than the keys
            (:func:`~attnlab.audit.call_probe.settle`): ``"nan"``, every query with a masked
            key gave NaN/Inf and the last query (no key masked) a finite output; ``"axis"``,
            the softmax inputs block exactly the future and the softmax ran over another axis.
        left_out: an optional padding mask (:data:`PADDING`) not passed.
        inputs: the input parameters' names, when they are keyword-only (``x`` is passed by
            name to each).
        positions: the parameters that take rotary tables or position indices
            (:mod:`~attnlab.audit.positions`): the learner's process passes them at angle 0.
        flags: optional parameters that turn the causal mask on (``is_causal``,
            ``is_decoder``...: :data:`~attnlab.audit.param_names.CAUSAL_ON`), passed True.
    """

    qkv: bool = False
    mask_name: str | None = None
    mask_at: int | None = None
    optional: bool = True
    style: str | None = None
    dims: str = "TT"
    time_first: bool = False
    causal: bool = True
    off_keys: str | None = None
    left_out: str | None = None
    inputs: tuple[str, ...] | None = None
    positions: tuple[str, ...] | None = None
    flags: tuple[str, ...] = ()

    @property
    def probed(self) -> bool:
        return self.mask_name is not None

    def mask(self, B: int, T: int) -> torch.Tensor | None:
        """The mask for an input of ``B`` prompts of ``T`` tokens, in this convention."""
        if self.style is None:
            return None
        if self.style == "lengths":
            return torch.arange(1, T + 1).repeat(B, 1)  # [B, T]: query t may read t + 1 keys
        if self.style == "flag":
            return None  # passed as True by request()
        keep = torch.tril(torch.ones(T, T, dtype=torch.bool))  # [T, T]
        made = {
            "keep_bool": lambda: keep,
            "keep_float": lambda: keep.float(),
            "blocked_bool": lambda: ~keep,
            "additive_inf": lambda: torch.zeros(T, T).masked_fill(~keep, float("-inf")),
            "additive_big": lambda: torch.zeros(T, T).masked_fill(~keep, -1e9),
        }[self.style]()
        return made.reshape(tuple(T if d == "T" else 1 for d in self.dims))

    def request(self, x: torch.Tensor) -> dict[str, Any] | None:
        """The ``call`` field of a forward request for input ``x`` ``[B, T, C]``."""
        if (
            not self.qkv and self.style is None and self.inputs is None and not self.time_first
            and not self.positions and not self.flags
        ):  # fmt: skip
            return None
        mask: Any = True if self.style == "flag" else self.mask(x.size(0), x.size(1))
        found: dict[str, Any] = {
            "qkv": self.qkv, "inputs": self.inputs, "mask_name": self.mask_name,
            "mask_at": self.mask_at, "mask": mask, "time_first": self.time_first,
        }  # fmt: skip
        if self.positions:
            found["positions"] = list(self.positions)
        if self.flags:
            found["flags"] = list(self.flags)
        return found

    def python(self) -> str:
        """The call's arguments as Python, with ``x`` and the mask ``M``."""
        if self.inputs is not None:
            args = ", ".join(f"{name}=x" for name in self.inputs)
        else:
            args = "x, x, x" if self.qkv else "x"
        if self.positions:
            args += "".join(f", {name}={name}" for name in self.positions)
        args += "".join(f", {name}=True" for name in self.flags)
        if self.style == "flag":
            return f"{args}, True" if self.mask_at is not None else f"{args}, {self.mask_name}=True"
        if self.style is None:
            return args
        return f"{args}, M" if self.mask_at is not None else f"{args}, {self.mask_name}=M"

    def reproduce(self, shape: tuple[int, ...]) -> str:
        """Python that calls ``m`` as the audit did on an input of ``shape`` = (B, T, C)."""
        x = f"torch.randn{tuple(shape)}"
        if self.time_first:
            x += ".transpose(0, 1)"
        if self.python() == "x":
            return f"m({x})"
        B, T = shape[0], shape[1]
        keep = f"torch.tril(torch.ones({T}, {T}, dtype=torch.bool))"
        made = {
            "keep_bool": keep,
            "keep_float": f"torch.tril(torch.ones({T}, {T}))",
            "blocked_bool": f"~{keep}",
            "additive_inf": f"torch.zeros({T}, {T}).masked_fill(~{keep}, float('-inf'))",
            "additive_big": f"torch.zeros({T}, {T}).masked_fill(~{keep}, -1e9)",
            "lengths": f"torch.arange(1, {T + 1}).repeat({B}, 1)",
            "flag": "",
            None: "",
        }[self.style]
        if self.style not in (None, "lengths", "flag") and self.dims != "TT":
            made += f".reshape({', '.join(str(T) if d == 'T' else '1' for d in self.dims)})"
        mask = f"; M = {made}" if made else ""
        return f"x = {x}{mask}; m({self.python()})"

    def describe(self) -> dict[str, str]:
        """The call in words, bilingual: arguments, mask convention and shape."""
        call = f"forward({self.python()})"
        if self.style == "flag" or (self.style is None and self.flags):
            named = self.mask_name if self.style == "flag" else ", ".join(self.flags)
            zh = f"{call}（{named} 是选择因果掩码的开关：设为 True，与 GPT 中一样）"
            en = f"{call} ({named} turns the causal mask on: set to True, as a GPT uses it)"
        elif self.style is None:
            zh = en = call
            if self.left_out and (not self.probed or self.causal):
                zh += f"（{self.left_out} 是填充掩码，不传：因果掩码由模块自己负责）"
                en += f" ({self.left_out} is a padding mask, not passed: the module must mask "
                en += "the future itself)"
            elif self.probed and self.causal:
                zh += f"（不传 {self.mask_name}：模块自己屏蔽未来）"
                en += f" (no {self.mask_name}: the module masks the future itself)"
        else:
            zh_style, en_style = _style_words(self.style)
            shape = _shape(self.style, self.dims)
            zh = f"{call}，M {shape}：{zh_style}"
            en = f"{call} with M {shape}: {en_style}"
            if self.style == "blocked_bool" and self.causal:
                zh += "（若你的掩码本意是 True = 可以关注，那它是反的）"
                en += " (if your mask means True = may attend, it is inverted)"
        if self.positions:
            listed = ", ".join(self.positions)
            zh += f"；{listed} 是旋转位置编码：传入角度为 0 的表（cos 1，sin 0），旋转不改变 q、k"
            en += f"; {listed} take rotary positions: tables of angle 0 were passed (cos 1, "
            en += "sin 0), under which the rotation leaves q and k unchanged"
        if self.time_first:
            zh += "；x 以时间在前的 [T, B, C] 传入，输出 [T, B, ·]"
            en += "; x passed time first, [T, B, C], output [T, B, ·]"
        if self.off_keys == "nan":
            zh += "；在这个掩码下，凡是有被屏蔽 Key 的 Query 都得到 NaN，只有最后一个"
            zh += "（没有被屏蔽的 Key）是有限值：权重不是沿 Key 轴归一化的（见第 6 项）"
            en += "; under this mask every query that has a masked key gives NaN and only the "
            en += "last one (no key masked) a finite value: the weights are not normalised over "
            en += "the keys (see item 6)"
        if self.off_keys == "axis":
            zh += "；在这个掩码下 Softmax 的输入正好屏蔽了未来，"
            zh += "但 Softmax 不是沿 Key 轴做的（见第 6 项）"
            en += "; under this mask the softmax input blocks exactly the future, but the softmax "
            en += "does not run over the keys (see item 6)"
        if self.probed and not self.causal:
            zh += "；试过的掩码约定都没有让模块成为因果的（见第 5 项）"
            en += "; no mask convention tried made the module causal (see item 5)"
        return {"zh": zh, "en": en}


def _style_words(style: str) -> tuple[str, str]:
    if style == "lengths":
        return "第 t 个查询可读前 t+1 个键（有效长度）", "query t reads t + 1 keys (valid lengths)"
    zh, en = next((zh, en) for name, zh, en in STYLES if name == style)
    return zh, en


def _shape(style: str, dims: str) -> str:
    if style == "lengths":
        return "[B, T]"
    return "[" + ", ".join(dims) + "]"


def _unsupported(params: list[list[Any]], name: str) -> LearnerError:
    listed = ", ".join(str(p[0]) for p in params if p[0] != "self")
    return LearnerError(
        f"forward({listed}) 需要参数 {name}，审计器无法提供：应是 forward(x)、forward(x, mask)、"
        f"forward(query, key, value, mask=None) 或 forward(hidden_states, attention_mask=None)",
        f"forward({listed}) needs {name}, which the auditor cannot give: expected forward(x), "
        f"forward(x, mask), forward(query, key, value, mask=None) or "
        f"forward(hidden_states, attention_mask=None)",
        "call",
    )


def _is_mask(name: str) -> bool:
    low = name.lower()
    if low in LENGTHS:
        return True
    return "mask" in low and not any(w in low for w in ("padding", "head_mask", "pad_mask"))


def plan(params: list[list[Any]] | None) -> Convention:
    """The call that ``forward``'s parameters ask for, before any probing.

    Args:
        params: ``[name, kind, has_default]`` per parameter (:func:`learner.forward_params`);
            None when unreadable (then ``forward(x)``).

    Raises:
        LearnerError: a required parameter is neither an input nor a mask.
    """
    if not params:
        return Convention()
    named = [p for p in params if p[1] not in ("VAR_POSITIONAL", "VAR_KEYWORD")]
    names = [str(p[0]).lower() for p in named]
    qkv = len(names) >= 3 and names[0] in QUERY and names[1] in KEY and names[2] in VALUE
    inputs = named[: 3 if qkv else 1]
    by_name = any(p[1] == "KEYWORD_ONLY" for p in inputs)  # forward(self, *, query, key, value)
    conv = Convention(qkv=qkv, inputs=tuple(str(p[0]) for p in inputs) if by_name else None)
    for i, (name, kind, has_default) in enumerate(params):
        if kind in ("VAR_POSITIONAL", "VAR_KEYWORD") or [name, kind, has_default] in inputs:
            continue
        if is_position(str(name)):
            conv = replace(conv, positions=(*(conv.positions or ()), str(name)))
            continue
        if has_default and str(name).lower() in PADDING and conv.mask_name is None:
            # Hugging Face's padding mask, or (Llama) the 4-D additive causal mask: probed
            # like a mask with no mask tried first, where the module masks the future itself.
            at = i if kind == "POSITIONAL_ONLY" else None
            conv = replace(conv, mask_name=str(name), mask_at=at, optional=True, left_out=str(name))
            continue
        if has_default and meaning(str(name)) == "causal_on" and not _is_mask(str(name)):
            conv = replace(conv, flags=(*conv.flags, str(name)))
            continue
        if conv.mask_name is None and _is_mask(str(name)):
            at = i if kind == "POSITIONAL_ONLY" else None
            conv = replace(conv, mask_name=str(name), mask_at=at, optional=bool(has_default))
        elif not has_default:
            raise _unsupported(params, str(name))
    return conv


def candidates(base: Convention) -> list[Convention]:
    """The conventions to try for a forward with a mask parameter, in order."""
    tried = [replace(base, style=None)] if base.optional else []
    if base.mask_name is not None and meaning(base.mask_name) == "causal_on" and base.optional:
        tried.append(replace(base, style="flag"))  # use_mask=False: a flag, set to True
    if base.mask_name is not None and base.mask_name.lower() in LENGTHS:
        return [*tried, replace(base, style="lengths")]
    batch_first = tried + [replace(base, style=s[0], dims=d) for d in SHAPES for s in STYLES]
    flipped = [replace(base, style=None, time_first=True)] if base.optional else []
    flipped += [
        replace(base, style=s[0], dims=d, time_first=True)
        for d in TIME_FIRST_SHAPES
        for s in STYLES
    ]
    return batch_first + flipped
