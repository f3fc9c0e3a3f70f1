"""The copyable code of sections 12, 13 and 15, built per language, and the lines it prints.

``listing(name, lang)`` is the exact text every front end shows and copies (``attnlab code``,
the web lesson, the notebook); the tests run that same text. The templates live in
:mod:`attnlab.content.listing_text`; the example's tensors are written out from
:mod:`attnlab.core.example` (W_K as its design, ``0.8 * SQRT2``...), token labels in ``lang``.

Example::

    >>> "class AttentionHead(nn.Module):" in listing("multihead", "en")
    True
    >>> expected_lines("script")[0]
    'Prompt A weights: [0.5987, 0.4013]'
"""

from __future__ import annotations

import math
import re
import string
from functools import cache

import torch

from attnlab.content.listing_text import DOCS, HEAD, HEAD_CLASS, MULTIHEAD, SCRIPT
from attnlab.core import example
from attnlab.core.pipeline import attention_stages
from attnlab.lesson import numbers
from attnlab.text.errors import InputError
from attnlab.text.fmt import vec
from attnlab.text.i18n import pick

#: Listing name → the section that shows it.
SECTIONS: dict[str, int] = {"script": 12, "head": 13, "multihead": 15}
NAMES: tuple[str, ...] = tuple(SECTIONS)
#: The file name each listing's docstring suggests.
FILES: dict[str, str] = {
    "script": "attention_by_hand.py",
    "head": "attention_head.py",
    "multihead": "multi_head.py",
}
_TEMPLATES = {"script": SCRIPT, "head": HEAD, "multihead": MULTIHEAD}
_DECIMALS = 4  # the listings print their final rows with 4 decimals, as the lesson does
_SQRT2 = math.sqrt(2)


def check_name(name: str) -> str:
    """``name`` if it is a listing; ``InputError`` naming the three otherwise."""
    if name not in SECTIONS:
        raise InputError(f"listing must be one of {', '.join(NAMES)}, got {name!r}")
    return name


#: The listings' comments in Chinese; comments that are only shapes (``# [B, T, T]``) or code
#: stay as they are in both languages.
ZH_COMMENTS = {
    "float64: the lesson's numbers, digit for digit": "float64：与本课的数字逐位一致",
    "the lesson's numbers, digit for digit": "与本课的数字逐位一致",
    "[T, T]: True where t may read j": "[T, T]：位置 t 可以读 j 的地方为 True",
    "The future gets -inf before the softmax: exp(-inf) = 0 (a 0 score would still get weight).":
        "Softmax 之前把未来位置填成 -inf：exp(-inf) = 0（填 0 的分数仍会分到权重）。",
    "[B, T, T]: each row sums to 1 over the keys": "[B, T, T]：每一行在所有 Key 上加总为 1",
    "weight: [d_head, C]": "weight 的形状：[d_head, C]",
    "A buffer, not a parameter: it follows .to(device) and is never trained.":
        "buffer 不是参数：它随 .to(device) 移动，但从不参与训练。",
    "[T, T]: one mask fits every shorter T": "[T, T]：同一个掩码适用于每个更短的 T",
    "nn.Linear keeps the transpose of the formula's [C, d_head]":
        "nn.Linear 保存的是公式中 [C, d_head] 的转置",
    "n_head x [B, T, d_head], all read x": "n_head 个 [B, T, d_head]，都读同一个 x",
    "[B, T, C]: the heads side by side": "[B, T, C]：各 Head 并排拼接",
    "[B, T, C]: W_O mixes the heads": "[B, T, C]：W_O 把各 Head 混合起来",
    "nn.Linear keeps [d_head, C]": "nn.Linear 保存 [d_head, C]",
    "every score 0: a plain mean of the visible values": "分数全为 0：可见 Value 的简单平均",
    "W_O = I: the heads side by side": "W_O = I：各 Head 原样并排",
}  # fmt: skip
_COMMENT = re.compile(r"# (.+)$", re.M)


@cache
def listing(name: str, lang: str) -> str:
    """The full text of listing ``name`` (``script``, ``head``, ``multihead``) in ``lang``:
    its docstring and comments in that language, the same code in both."""
    check_name(name)
    indent = "" if name == "script" else "    "
    text = string.Template(_TEMPLATES[name]).substitute(
        doc=_docstring(DOCS[lang][name].format(file=FILES[name])),
        data="\n".join(indent + line if line else line for line in _data(lang)),
        head_class=HEAD_CLASS,
    )
    if lang != "zh":
        return text
    return _COMMENT.sub(lambda m: "# " + ZH_COMMENTS.get(m.group(1), m.group(1)), text)


def _docstring(text: str) -> str:
    return f'"""{text}\n"""'


def _over_sqrt2(value: float) -> float:
    return round(value / _SQRT2, 12)  # W_K's design factors, 0.8 and not 0.7999999999999999


def _literal(value: float, design_sqrt2: bool) -> str:
    if design_sqrt2 and value != 0:
        return f"{_over_sqrt2(value)!r} * SQRT2"
    return repr(float(value) + 0.0)  # + 0.0: never "-0.0"


def w_k_design() -> list[str]:
    """W_K's distinct non-zero entries as written in the listings: ``["0.8·√2", "0.2·√2", ...]``."""
    factors = dict.fromkeys(_over_sqrt2(v) for v in example.lesson_w_k().flatten().tolist() if v)
    return [f"{f!r}·√2" for f in factors]


def _rows(t: torch.Tensor, labels: list[str], design_sqrt2: bool = False) -> list[str]:
    lines = ["    ["]
    for values, label in zip(t.tolist(), labels, strict=True):
        items = ", ".join(_literal(v, design_sqrt2) for v in values)
        lines.append(f"        [{items}],  # {label}")
    return [*lines, "    ],"]


def _data(lang: str) -> list[str]:
    """Python lines defining ``x``, ``w_q``, ``w_k``, ``w_v`` (unindented)."""
    x, words = example.lesson_x(), example.vocab(lang)
    features = [pick(lang, "（未用）", "(unused)")] * x.size(-1)
    for prompt, rows in zip(example.PROMPTS, x, strict=True):
        for token_id, row in zip(prompt.token_ids, rows, strict=True):
            features[int(row.argmax())] = words[token_id]
    names = example.prompt_names(len(example.PROMPTS))
    lines = [
        pick(
            lang,
            "# 提示 A 与 B，每行一个词的 one-hot 嵌入",
            "# Prompts A and B, one one-hot token a row",
        )
        + f": [B, T, C] = {list(x.shape)}",
        "x = torch.tensor(",
        "    [",
    ]
    for name, prompt, rows in zip(names, example.PROMPTS, x, strict=True):
        tokens = [words[i] for i in prompt.token_ids]
        lines += [f"        [  # {name}"]
        lines += ["    " + line for line in _rows(rows, tokens)[1:-1]]
        lines += ["        ],"]
    lines += ["    ]", ")", ""]
    lines += pick(
        lang,
        "# 投影按公式写成 [C, d_head]，所以 q = x @ w_q；第 i 行属于嵌入的第 i 个特征。",
        "# Projections in the formula's layout [C, d_head] (q = x @ w_q);\n"
        "# row i belongs to embedding feature i.",
    ).split("\n")
    for symbol, w, root in [
        ("w_q", example.lesson_w_q(), False),
        ("w_k", example.lesson_w_k(), True),
        ("w_v", example.lesson_w_v(), False),
    ]:
        lines += [f"{symbol} = torch.tensor(", *_rows(w, features, root)[:-1], "    ]", ")"]
    return lines


def expected_lines(name: str) -> list[str]:
    """The final rows listing ``name`` prints, computed by the pipeline (4 decimals)."""
    check_name(name)
    st = numbers.stages()
    prompts = example.prompt_names(st.x.size(0))
    lines = []
    if name == "script":
        lines = [
            f"Prompt {p} weights: {vec(st.weights[b, -1], _DECIMALS)}"
            for b, p in enumerate(prompts)
        ]
    output = st.output if name != "multihead" else _multihead_demo_output()
    lines += [f"Prompt {p} output:  {vec(output[b, -1], _DECIMALS)}" for b, p in enumerate(prompts)]
    return lines


def _multihead_demo_output() -> torch.Tensor:
    """Section 15's demo: the lesson's head beside one with W_Q = 0, and W_O = I."""
    x, w_k, w_v = example.lesson_x(), example.lesson_w_k(), example.lesson_w_v()
    lesson = numbers.stages().output  # [B, T, d_head]
    uniform = attention_stages(x, torch.zeros_like(w_k), w_k, w_v).output  # [B, T, d_head]
    return torch.cat([lesson, uniform], dim=-1)  # [B, T, C]; W_O = I leaves it as it is
