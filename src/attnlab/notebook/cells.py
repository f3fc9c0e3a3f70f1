"""The notebook's code cells: the setup, each section's computation with the library, its
figures and listings, and one cell per graded exercise.

Every cell is source text; comments are in the notebook's language. The kernel reads ``LANG``
from the setup cell.
"""

from __future__ import annotations

from attnlab.content.blocks import Block
from attnlab.content.knowledge import Exercise
from attnlab.content.walk_text import TEXT
from attnlab.figures import registry
from attnlab.notebook.markdown import escape
from attnlab.text.i18n import pick

#: Stages of the lesson's head each section shows as tables (:func:`show_stage`).
STAGES: dict[int, tuple[str, ...]] = {
    4: ("q", "k", "v", "raw_scores"),
    5: ("weights",),
    6: ("output",),
    8: ("scaled_scores",),
    10: ("causal_mask",),
    11: ("masked_scores", "weights"),
}


def intro(lang: str) -> str:
    """The first Markdown cell: the title and how to use the notebook."""
    return "\n\n".join([
        f"# {escape(TEXT[lang]['title'])}",
        pick(lang,
             "从上到下依次运行每个单元格（Jupyter 里按 Shift+Enter）。表格、图和代码都由 attnlab 现场计算；"
             "练习单元格里把 `...` 换成你算出的数，再运行它，就能看到判分结果。",
             "Run the cells from top to bottom (Shift+Enter in Jupyter). Tables, figures and code "
             "are computed by attnlab as you go; in an exercise cell, replace `...` with your number "
             "and run it to see the grader's verdict."),
    ])  # fmt: skip


def setup(lang: str) -> str:
    """The first code cell: imports and the notebook's language."""
    return "\n".join([
        "%matplotlib inline",
        "import torch",
        "",
        "from attnlab import figures",
        "from attnlab.lesson import numbers",
        "from attnlab.notebook.kernel import check, practice, show_stage",
        "from attnlab.text.fmt import num, vec",
        "",
        f'LANG = "{lang}"  ' + pick(lang, "# 表格、图和判分的语言", "# language of tables, figures and verdicts"),
    ])  # fmt: skip


def stage_cell(section_id: int, lang: str) -> str | None:
    """Section ``section_id``'s stages as tables, or None when it shows none."""
    stages = STAGES.get(section_id)
    if not stages:
        return None
    comment = pick(
        lang,
        "# 由 attnlab.core.pipeline 计算，行 = Query 位置，列 = Key 位置",
        "# computed by attnlab.core.pipeline; rows = query positions, columns = key positions",
    )
    return "\n".join([comment, f"for stage in {stages!r}:", "    display(show_stage(stage, LANG))"])  # fmt: skip


def extra_cell(section_id: int, lang: str) -> str | None:
    """Sections 1, 9, 16 and 17 compute something other than a stage of the head."""
    if section_id == 1:
        return "\n".join([
            pick(lang, "# 因果均匀平均：末位置的读取比例是固定的", "# Causal uniform mean: the final position's ratios are fixed"),
            'uniform = numbers.tensor("uniform.weights")  # [B, T, T]',
            'attention = numbers.tensor("weights")  # [B, T, T]',
            'for b, name in enumerate(("A", "B")):  # the final position t=1 of each prompt',
            '    print(name, "uniform  :", vec(uniform[b, -1], 4), " attention:", vec(attention[b, -1], 4))',
        ])  # fmt: skip
    if section_id == 9:
        return "\n".join([
            pick(lang, "# 在 CausalSelfAttention 中实测的形状", "# Shapes measured in CausalSelfAttention"),
            "for row in numbers.shape_rows():",
            '    print(f"{row.stage:12} {list(row.shape)!s:16} {\', \'.join(row.axes)}")',
        ])  # fmt: skip
    if section_id == 16:
        return "\n".join([
            pick(lang, "# 只调 W_Q 的一个元素：梯度、一步更新、更新前后", "# One entry of W_Q: its gradient, one update, before and after"),
            "r = numbers.experiment()",
            'print("d(mean loss)/dq, autograd:", num(r.grad_autograd, 6))',
            'print("finite difference:", num(r.grad_finite_difference, 6))',
            'print("q:", num(r.q_old, 6), "->", num(r.q_new, 6))',
            'print("mean loss:", num(r.before.loss_mean, 6), "->", num(r.after.loss_mean, 6))',
        ])  # fmt: skip
    if section_id == 17:
        return "\n".join([
            pick(lang, "# 分数元素个数 B·n_head·T²", "# Score elements B·n_head·T²"),
            "for row in numbers.cost_rows():",
            '    print(f"T={row.tokens:>5}: {row.elements:>12,} (x{row.ratio:,.0f})")',
        ])  # fmt: skip
    return None


def block_cell(b: Block, lang: str) -> str:
    """A listing (run as it is) or a figure (drawn) as a code cell's source."""
    if b.kind == "listing":
        return b.data["source"].rstrip("\n")
    if b.kind == "figure":
        return f"# {b.text}\n{registry.figure(b.data['name']).code}"
    raise ValueError(f"block kind must be listing or figure, got {b.kind!r}")


def exercise_cell(ex: Exercise, lang: str) -> str:
    """An exercise: type a number in place of ``...``, run the cell, read the grader's verdict."""
    if ex.decimals:
        how = pick(lang, f"（保留 {ex.decimals} 位小数）", f" ({ex.decimals} decimals)")
    else:
        how = pick(lang, "（整数）", " (whole numbers)")
    title = pick(lang, f"# 练习 {ex.id}{how}：", f"# Exercise {ex.id}{how}: ")
    hint = pick(lang, "  # 把 ... 换成你的答案，例如 0.5 或 [0.5, 0.5]",
                "  # replace ... with your answer, e.g. 0.5 or [0.5, 0.5]")  # fmt: skip
    return f"{title}{' '.join(ex.prompt.split())}\ncheck({ex.id!r}, ..., LANG){hint}"


def practice_cell(section_id: int, lang: str) -> str | None:
    """After a computational section's exercises: the same skill on numbers nobody has shown."""
    from attnlab.grading.practice import SECTIONS

    if section_id not in SECTIONS:
        return None
    return "\n".join([
        pick(lang, "# 换一组没见过的数再练一次：p 会显示题目；p.check(\"...\") 判分，"
                   "p.solution() 给出解答，p = p.new() 换一组数",
             "# Practise on numbers you have not seen: p shows the exercise; p.check(\"...\") "
             "grades, p.solution() shows the working, p = p.new() deals new numbers"),
        f"p = practice({section_id}, lang=LANG)",
        "p",
    ])  # fmt: skip
