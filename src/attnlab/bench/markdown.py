"""A bench run as Markdown: the command, the machine, the bars, the bar-shape and RSS tables.

``attnlab bench --markdown FILE`` writes it; ``benchmarks/results/`` keeps the quiet and the
busy run side by side.
"""

from __future__ import annotations

from attnlab.bench.bars import check_bars
from attnlab.bench.rss import ratio_to_reference
from attnlab.bench.runner import BenchResult
from attnlab.bench.tables import context_lines, short
from attnlab.bench.workloads import FORWARD, FORWARD_BACKWARD, IMPLS
from attnlab.text.i18n import pick


def _cell(value: float | None, suffix: str = "", digits: int = 1) -> str:
    return "—" if value is None else f"{value:,.{digits}f}{suffix}"


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def _bar_rows(result: BenchResult, lang: str) -> list[list[str]]:
    marks = {True: "✓", False: "✗", None: ""}
    return [
        [bar.what[lang], _cell(bar.value, digits=2), bar.limit, marks[bar.ok]]
        for bar in check_bars(result)
    ]


def _shape_rows(result: BenchResult) -> list[list[str]]:
    by_key = {(r.impl, r.mode): r for r in result.rows if r.section == "bar"}
    rows = []
    for impl in IMPLS:
        if (impl.key, FORWARD) not in by_key:
            continue
        cells = [impl.level, impl.label]
        for mode in (FORWARD, FORWARD_BACKWARD):
            row = by_key[(impl.key, mode)]
            cells += [short(row.median_ms), _cell(row.ratio_to_sdpa, "×", 2)]
        cells += [short(by_key[(impl.key, m)].peak_mib) for m in (FORWARD, FORWARD_BACKWARD)]
        rows.append(cells)
    return rows


def _memory_rows(result: BenchResult) -> list[list[str]]:
    rows = []
    for r in result.memory:
        if r.status != "ok":
            rows.append([r.label, r.status, r.note, "", ""])
            continue
        spread = f"{short(r.rss_mib_min)}–{short(r.rss_mib_max)}"
        ratio = _cell(ratio_to_reference(result.memory, r.case), "×", 2)
        rows.append([r.label, short(r.rss_mib), spread, ratio, str(r.repeats)])
    return rows


def report(result: BenchResult, lang: str, command: str) -> str:
    """The Markdown text of one run's tiled-versus-SDPA figures, in ``lang``."""
    s = result.config.bar
    busy = result.competitor is not None
    title = pick(
        lang,
        "分块注意力与 SDPA：" + ("另有一个忙碌进程" if busy else "没有竞争进程"),
        "Tiled attention against SDPA: "
        + ("next to one busy process" if busy else "no competing process"),
    )
    lines = [f"# {title}", "", f"{pick(lang, '命令', 'Command')}: `{command}`", ""]
    lines += [f"- {line}" for line in context_lines(result, lang)]
    lines += ["", f"## {pick(lang, '目标（本次运行的数字）', 'Bars (this run)')}", ""]
    head = [
        pick(lang, "比较", "comparison"),
        pick(lang, "测得", "measured"),
        pick(lang, "目标", "bar"),
    ]
    lines += _table([*head, ""], _bar_rows(result, lang))
    shape = f"B={s.B}, T={s.T}, C={s.C}, n_head={s.n_head}"
    lines += ["", f"## {pick(lang, '目标形状', 'Bar shape')} {shape}", ""]
    head = [pick(lang, "层级", "level"), pick(lang, "实现", "implementation")]
    head += ["fwd ms", "×SDPA", "fwd+bwd ms", "×SDPA", "MiB fwd", "MiB f+b"]
    lines += _table(head, _shape_rows(result))
    m = result.config.standard
    shape = f"B={m.B}, T={m.T}, C={m.C}, n_head={m.n_head}"
    lines += [
        "",
        f"## {pick(lang, 'RSS 增长（no_grad 前向）', 'RSS growth, no_grad forward')} {shape}",
    ]
    head = [pick(lang, "实现", "implementation"), "MiB", pick(lang, "最小–最大", "min–max")]
    head += [pick(lang, "×逐个头", "×heads one at a time"), pick(lang, "进程数", "processes")]
    lines += ["", *_table(head, _memory_rows(result))]
    note = pick(
        lang,
        "×SDPA：与同一层级的 SDPA 参照行之比（layer：F.linear + F.sdpa；kernel：F.sdpa）。",
        "×SDPA: against the SDPA reference row of the same level (layer: F.linear + F.sdpa; "
        "kernel: F.sdpa).",
    )
    return "\n".join([*lines, "", note, ""])
