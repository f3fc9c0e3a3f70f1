"""Rich rendering for ``trace``, ``shapes`` and ``cost`` (imported only when they run)."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from attnlab.content.stageview import MASKED_MARK, StageView
from attnlab.content.trace import prompt_word
from attnlab.text.fmt import ratio, shape_text
from attnlab.text.i18n import pick


def _table(title: str | None, headers: list[str], rows: list[list[str]]) -> Table:
    # Cells are plain text (token labels from a file may hold "[red]" or "[/b]"): escape rich's
    # markup so they print as written; the only markup is ours, dimming the masked entries.
    table = Table(title=title, title_justify="left", header_style="bold")
    for i, h in enumerate(headers):
        # The label column may wrap; number columns never do (a cut number would mislead).
        table.add_column(
            escape(h), justify="left" if i == 0 else "right", no_wrap=i > 0, overflow="fold"
        )
    for row in rows:
        table.add_row(
            *[f"[dim]{escape(c)}[/dim]" if c.endswith(MASKED_MARK) else escape(c) for c in row]
        )
    return table


def print_views(views: list[StageView], lang: str, step: bool) -> None:
    """Each stage: heading with shape, explanation, one table per prompt; Enter between stages
    with ``step``."""
    console = Console(highlight=False)
    for n, view in enumerate(views):
        # Our prose holds brackets (o_t = Σ_j P[t,j]·v_j) that rich would read as markup.
        console.rule(f"[bold]{escape(view.title)}[/bold]  {shape_text(view.shape)}", align="left")
        console.print(escape(view.explanation))
        for t in view.tables:
            label = None if view.key == "causal_mask" else f"{prompt_word(lang)} {t.prompt}"
            console.print(_table(label, t.headers, t.rows))
        if view.note:
            console.print(f"[dim]{escape(view.note)}[/dim]")
        if step and n < len(views) - 1:
            _wait(console, lang)


def _wait(console: Console, lang: str) -> None:
    console.print(
        pick(lang, "[dim]按 Enter 看下一步…[/dim]", "[dim]Press Enter for the next stage…[/dim]"),
        end="",
    )
    try:
        input()
    except EOFError:
        console.print()


#: Each measured stage of :func:`print_shapes`, named for the reader.
SHAPE_STAGE_NAMES: dict[str, dict[str, str]] = {
    "zh": {
        "input": "输入",
        "qkv": "分 head 后 Q/K/V",
        "scores": "scores：每个 query 对每个 key",
        "weights": "weights",
        "head_outputs": "各 head 输出",
        "merged": "拼回通道",
        "output": "W_O 之后",
    },
    "en": {
        "input": "input",
        "qkv": "per-head Q/K/V",
        "scores": "scores: every query against every key",
        "weights": "weights",
        "head_outputs": "head outputs",
        "merged": "heads merged into channels",
        "output": "after W_O",
    },
}


def print_shapes(lang: str, batch: int, tokens: int, embed: int, heads: int) -> None:
    """Section 9's table measured through CausalSelfAttention, then what each axis means."""
    from attnlab.lesson.shapes import measure_shapes

    meanings = {
        "B": pick(lang, "批次：互不读取的样本", "batch: independent examples"),
        "T": pick(lang, "Token 位置", "token position"),
        "C": pick(lang, "模型特征（宽度）", "model feature (width)"),
        "n_head": pick(lang, "Head 编号", "which head"),
        "d_head": pick(lang, "一个 Head 内的特征", "feature inside one head"),
        "T_query": pick(lang, "Query 位置：发起读取的行", "query position: the row that reads"),
        "T_key": pick(lang, "Key/Value 位置：被读取的列", "key/value position: the column read"),
    }
    title = pick(
        lang,
        f"B={batch}, T={tokens}, C={embed}, n_head={heads}（在 CausalSelfAttention 中实测）",
        f"B={batch}, T={tokens}, C={embed}, n_head={heads} (measured in CausalSelfAttention)",
    )
    measured = measure_shapes(batch=batch, tokens=tokens, embed=embed, heads=heads)
    rows = [
        [SHAPE_STAGE_NAMES[lang][r.stage], shape_text(r.shape), "[" + ", ".join(r.axes) + "]"]
        for r in measured
    ]
    headers = [pick(lang, "张量", "tensor"), pick(lang, "形状", "shape"), pick(lang, "轴", "axes")]
    console = Console(highlight=False)
    table = _table(title, headers, rows)
    table.columns[2].justify = "left"
    console.print(table)
    legend = _table(
        None,
        [pick(lang, "轴", "axis"), pick(lang, "含义", "meaning")],
        [[axis, meaning] for axis, meaning in meanings.items()],
    )
    legend.columns[1].justify = "left"
    console.print(legend)


def print_cost(lang: str, tokens: list[int], batch: int, heads: int) -> None:
    """Section 17's table: score elements, ratio to the first T, float32 memory."""
    from attnlab.lesson.cost import cost_table, human_bytes

    rows = [
        [str(r.tokens), f"{r.elements:,}", ratio(r.ratio), human_bytes(r.bytes_float32)]
        for r in cost_table(tokens, batch, heads)
    ]
    headers = [
        "T",
        "B·n_head·T²",
        pick(lang, f"相对 T={tokens[0]}", f"vs T={tokens[0]}"),
        pick(lang, "scores + weights 内存 (float32)", "scores + weights memory (float32)"),
    ]
    title = pick(
        lang,
        f"Score 元素（B={batch}, n_head={heads}）",
        f"Score elements (B={batch}, n_head={heads})",
    )
    Console(highlight=False).print(_table(title, headers, rows))
