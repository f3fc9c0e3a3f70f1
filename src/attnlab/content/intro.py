"""The lesson's introduction: the key question, what you will be able to do, how long it takes,
the four study units and how to start. Shown above section 0 on ``/lesson`` and at the head of
section 0's own page.

The final-row weights the learner is told to look for come from :mod:`attnlab.lesson.numbers`;
the reading time and the units are the course's own plan, kept here as data.
"""

from __future__ import annotations

from functools import cache

from attnlab.content.blocks import Block, flow, heading, note, p, pre, table
from attnlab.core import example
from attnlab.lesson import numbers
from attnlab.text.fmt import vec
from attnlab.text.i18n import pick

#: The course page's own estimate of the reading time, in minutes.
READING_MINUTES = 110
#: The four study units as (first section, last section).
UNITS: tuple[tuple[int, int], ...] = ((1, 3), (4, 9), (10, 11), (12, 19))
#: Where this week sits in the course: the week before (embeddings), the week after
#: (token+position demo values, the Transformer block) and the weeks of the trainable MiniGPT.
WEEK_BEFORE, WEEK_AFTER, MINIGPT_WEEKS = 6, 8, (10, 12)
#: The sections that follow a gradient: the whole chain (both paths) and the logits experiment.
CHAIN_SECTION, EXPERIMENT_SECTION = 7, 16
#: The command the introduction tells the learner to run first.
RUN_COMMAND = "python week07_attention.py"
#: The script of section 16's experiment (``attnlab grad`` prints the same text).
GRAD_COMMAND = "python course_examples/week07_attention.py"


def title(lang: str) -> str:
    """The introduction's heading."""
    return pick(lang, "导读", "Introduction")


@cache
def intro(lang: str) -> tuple[Block, ...]:
    """The introduction's blocks in ``lang`` (cached: they depend only on the language)."""
    tok = example.prompt_tokens(lang)
    return (
        *_question(lang, tok),
        *_objectives(lang),
        *_plan(lang),
        *_start(lang, tok),
    )


def _question(lang: str, tok: list[list[str]]) -> list[Block]:
    a, b, last = "".join(tok[0]), "".join(tok[1]), tok[0][-1]
    return [
        heading(pick(lang, "核心问题", "The key question")),
        p(pick(lang,
            f"“{last}”既是 [{a}] 的最后一个词，也是 [{b}] 的最后一个词。模型怎样从输入向量算出 Q、K、V，"
            "给它能看到的位置打分，并让这两个“" + last + "”得到不同的上下文表示和不同的下一词 Logits？",
            f"“{last}” ends both [{' '.join(tok[0])}] and [{' '.join(tok[1])}]. How does the model compute "
            "Q, K and V from the input vectors, score the positions it may see, and give the two "
            f"“{last}” tokens different context vectors and different next-token logits?")),
    ]  # fmt: skip


def _objectives(lang: str) -> list[Block]:
    return [
        heading(pick(lang, "学完这一周，你能够", "By the end of the week you can")),
        flow([
            pick(lang, "用同一个可复现的小例子，从头算到尾：X → Q/K/V → 原始分数 → 缩放 → 因果掩码 → 注意力权重 → 加权的 Value。",
                 "work one reproducible small example end to end: X → Q/K/V → raw scores → scaling → causal mask → attention weights → weighted values."),
            pick(lang, "说清 Attention 怎样打分、打分规则怎样靠训练学到，以及注意力 Softmax 和词表 Softmax 有什么不同。",
                 "explain how attention scores, how its scoring is learned in training, and how the attention softmax differs from the vocabulary softmax."),
            pick(lang, "读懂 [B,T,C]、[B,T,d_head]、[B,T,T]、[B,n_head,T,T] 每一个轴代表什么。",
                 "read what every axis of [B,T,C], [B,T,d_head], [B,T,T] and [B,n_head,T,T] stands for."),
            pick(lang, "写出并检查三样东西：能复现手算的单个 Head、可复用的因果 Head、多头注意力。",
                 "write and audit a single head that reproduces the hand numbers, a reusable causal head, and multi-head attention."),
            pick(lang, "解释 Attention 的输出怎样一路影响 Logits、它做不到什么、T² 的成本，以及为什么还需要 Week 8 的 Transformer Block。",
                 "explain how attention's output goes on to shape the logits, what attention cannot do, its T² cost, and why Week 8's Transformer block is still needed."),
        ]),
    ]  # fmt: skip


def _plan(lang: str) -> list[Block]:
    units = [
        (
            pick(lang, "一：读什么", "1: what to read"),
            pick(
                lang,
                "均匀平均和手工权重的局限；Query 表达这次要找什么，Key 用来打分，Value 是真正带回的内容。",
                "where a plain average and hand-set weights fall short; the query states what this position "
                "looks for, keys are scored, values are what is carried back.",
            ),
        ),
        (
            pick(lang, "二：一步步手算", "2: compute step by step"),
            pick(
                lang,
                "Q/K/V → 点积 → 缩放 → 每行权重 → 加权求和；每个数都追溯到同一组输入。",
                "Q/K/V → dot products → scaling → weights per row → weighted sum; every number traces "
                "back to the same inputs.",
            ),
        ),
        (
            pick(lang, "三：为什么不许偷看", "3: why no peeking"),
            pick(
                lang,
                "对照输入和下一词目标，看掩码的方向、−∞ 的作用和位置轴。",
                "set inputs beside next-token targets: the mask's direction, the role of −∞, the "
                "position axes.",
            ),
        ),
        (
            pick(lang, "四：怎样参与学习", "4: how it learns"),
            pick(
                lang,
                "末位置输出接词表打分和交叉熵；看一个 W_Q 参数的梯度，再理解多头。",
                "the final output feeds vocabulary scores and cross-entropy; follow the gradient of one "
                "W_Q entry, then meet multiple heads.",
            ),
        ),
    ]
    rows = [
        (name, f"§{first}–§{last}", what)
        for (name, what), (first, last) in zip(units, UNITS, strict=True)
    ]
    return [
        heading(pick(lang, "学习安排", "Study plan")),
        p(pick(lang, f"预计阅读时间约 {READING_MINUTES} 分钟，分四个单元。",
               f"Estimated reading time: about {READING_MINUTES} minutes, in four units.")),
        table([pick(lang, "单元", "Unit"), pick(lang, "小节", "Sections"), pick(lang, "要解决的问题", "What it settles")],
              rows, key="study-plan"),
        note(pick(lang,
            "读一段、手算一段、改一段代码，交替进行；每个单元都可以分几次完成。按页面从上到下的顺序学即可，"
            "小节编号只为旧链接和回查保留，不必按编号来回跳。",
            "Alternate reading, computing by hand and changing the code; each unit can be split over "
            "several sittings. Learn in the page's top-to-bottom order; the section numbers stay for "
            "old links and look-ups, there is no need to jump around by number.")),
    ]  # fmt: skip


def _start(lang: str, tok: list[list[str]]) -> list[Block]:
    wa, wb = (vec(numbers.tensor(f"weights.{n}.final"), 4) for n in example.prompt_names(2))
    last = tok[0][-1]
    return [
        heading(pick(lang, "先运行一次", "Run it first")),
        pre(RUN_COMMAND),
        p(pick(lang,
            f"要看到的：A 和 B 的末位置（最后的“{last}”）权重不同，A 为 {wa}，B 为 {wb}。"
            "再说出两种 Softmax 各沿哪个轴归一化：注意力 Softmax 沿位置轴（读哪里），词表 Softmax 沿词表轴（下一个词）。",
            f"What to look for: the final-position weights (the last “{last}”) differ, {wa} for A and "
            f"{wb} for B. Then say along which axis each softmax normalises: the attention softmax "
            "over positions (where to read), the vocabulary softmax over the vocabulary (which token "
            "next).")),
        note(pick(lang,
            "多个 Head 是并行地读信息；多个 Block 是串行地改造表示。两件事不要混为一谈。",
            "Several heads read in parallel; several blocks transform the representation one after "
            "another. Do not confuse the two.")),
    ]  # fmt: skip
