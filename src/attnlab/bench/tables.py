"""Rich tables of a bench run, in Chinese or English (the command line prints these)."""

from __future__ import annotations

from collections import defaultdict

from rich.table import Table

from attnlab.bench.bars import Bar
from attnlab.bench.results import BenchRow, FitRow
from attnlab.bench.rss import RSS_METHOD, ratio_to_reference
from attnlab.bench.runner import BenchResult
from attnlab.bench.workloads import FORWARD, FORWARD_BACKWARD, IMPLS
from attnlab.text.i18n import pick

_STATUS = {
    "zh": {"skipped": "跳过", "refused": "拒绝", "failed": "失败"},
    "en": {"skipped": "skipped", "refused": "refused", "failed": "failed"},
}


def _status(row: BenchRow, lang: str) -> str:
    return _STATUS[lang].get(row.status, row.status)


def _num(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def short(value: float | None) -> str:
    """Milliseconds or MiB with enough digits to tell small measurements apart."""
    if value is None:
        return "—"
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}" if value >= 1 else f"{value:.3f}"


def _ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}×"


def _impl_columns(table: Table, lang: str) -> None:
    table.add_column(pick(lang, "层级", "level"))
    table.add_column(pick(lang, "实现", "implementation"))


def context_lines(result: BenchResult, lang: str) -> list[str]:
    """What was measured and how: threads, matmul rate, timing and memory methods."""
    before, after = result.matmul_gflops
    c = result.config
    load = "{:.2f} → {:.2f}".format(*result.load)
    lines = {
        "zh": [
            f"配置 {c.name}：{result.threads} 个线程，用时 {result.seconds:.0f} 秒",
            f"机器：{result.machine}；1 分钟平均负载 {load}（开始 → 结束）",
            f"本机 float32 矩阵乘法：开始时 {before:.0f}、结束时 {after:.0f} GFLOP/s"
            "（实际上限；两者相差大说明机器正被共享，数字有噪声）",
            f"时间：预热一次后，{c.min_repeats}–{c.max_repeats} 次计时调用的中位数，各实现轮流运行",
            f"峰值内存：{result.memory_method}",
            f"RSS 增长（每个情形一个新进程）：{RSS_METHOD}",
            "×SDPA：与同一层级（layer 或 kernel）、同一形状和模式的 SDPA 参照行之比",
        ],
        "en": [
            f"config {c.name}: {result.threads} threads, {result.seconds:.0f} s",
            f"machine: {result.machine}; 1-minute load average {load} (start → end)",
            f"this machine's float32 matmul: {before:.0f} GFLOP/s at the start, {after:.0f} at "
            "the end (the practical limit; a large gap means the machine is shared and figures "
            "are noisy)",
            f"time: median of {c.min_repeats}-{c.max_repeats} timed calls after one warm-up, "
            "implementations taking turns",
            f"peak memory: {result.memory_method}",
            f"{RSS_METHOD}",
            "×SDPA: against the SDPA reference row of the same level (layer or kernel), shape, "
            "mode",
        ],
    }
    return lines[lang] + _busy_lines(result, lang)


def _busy_lines(result: BenchResult, lang: str) -> list[str]:
    competitor = result.competitor
    if competitor is None:
        return []
    lines = [
        pick(
            lang,
            f"有竞争：整个运行期间另有一个忙循环进程（pid {competitor.pid}，"
            f'python -c "while True: pass" 式）占用一个核，最长 {competitor.limit_seconds:.0f} 秒',
            f"under contention: one busy-looping process (pid {competitor.pid}, like "
            f'python -c "while True: pass") ran throughout, limited to '
            f"{competitor.limit_seconds:.0f} s",
        )
    ]
    if competitor.stopped_early:
        lines.append(
            pick(
                lang,
                "注意：竞争进程在运行结束前已到时限退出，之后的行是在没有它的情况下测的",
                "note: the competing process reached its time limit before the run ended; "
                "later rows were measured without it",
            )
        )
    return lines


_TITLES = {"standard": ("标准形状", "standard shape"), "bar": ("目标形状", "bar shape")}


def shape_table(result: BenchResult, section: str, lang: str) -> Table:
    """Every implementation measured in ``section`` (``standard`` or ``bar``), at its one shape:
    time, ratio, GFLOP/s and peak memory."""
    s = result.config.standard if section == "standard" else result.config.bar
    shape = f"B={s.B}, T={s.T}, C={s.C}, n_head={s.n_head}"
    zh, en = _TITLES[section]
    table = Table(title=pick(lang, f"{zh} {shape}", f"{en} {shape}"))
    _impl_columns(table, lang)
    for head in ("fwd ms", "×SDPA", "GFLOP/s", "fwd+bwd ms", "×SDPA", "GFLOP/s"):
        table.add_column(head, justify="right")
    table.add_column(pick(lang, "MiB 前向", "MiB fwd"), justify="right")
    table.add_column(pick(lang, "MiB 前向+反向", "MiB f+b"), justify="right")
    by_key = {(r.impl, r.mode): r for r in result.rows if r.section == section}
    impls = [impl for impl in IMPLS if (impl.key, FORWARD) in by_key]
    for i, impl in enumerate(impls):
        if i and impl.level != impls[i - 1].level:
            table.add_section()
        cells = [impl.level, impl.label]
        for mode in (FORWARD, FORWARD_BACKWARD):
            row = by_key[(impl.key, mode)]
            if row.status != "ok":
                cells += [_status(row, lang), "", ""]
            else:
                cells += [short(row.median_ms), _ratio(row.ratio_to_sdpa), _num(row.gflops, 0)]
        cells += [short(by_key[(impl.key, m)].peak_mib) for m in (FORWARD, FORWARD_BACKWARD)]
        table.add_row(*cells)
    return table


def sweep_table(result: BenchResult, mode: str, lang: str, memory: bool = False) -> Table:
    """One cell per implementation and T: milliseconds with the ratio, or peak MiB."""
    c = result.config
    shape = f"B={c.sweep_B}, n_head={c.sweep_heads}, d_head={c.sweep_d_head}"
    zh_what, en_what = (
        ("峰值内存 MiB", "peak memory MiB") if memory else ("毫秒 (×SDPA)", "ms (×SDPA)")
    )
    title = pick(lang, f"T 扫描 {shape}：{mode}，{zh_what}", f"T sweep {shape}: {mode}, {en_what}")
    table = Table(title=title)
    _impl_columns(table, lang)
    for T in c.sweep_Ts:
        table.add_column(f"T={T}", justify="right")
    cells = {(r.impl, r.T): r for r in result.rows if r.section == "sweep" and r.mode == mode}
    for i, impl in enumerate(IMPLS):
        if i and impl.level != IMPLS[i - 1].level:
            table.add_section()
        texts = []
        for T in c.sweep_Ts:
            row = cells.get((impl.key, T))
            if row is None:  # not planned in this run
                texts.append("—")
            elif row.status != "ok":
                texts.append(_status(row, lang))
            elif memory:
                texts.append(short(row.peak_mib))
            else:
                texts.append(f"{short(row.median_ms)} ({_ratio(row.ratio_to_sdpa)})")
        table.add_row(impl.level, impl.label, *texts)
    return table


def memory_table(result: BenchResult, lang: str) -> Table:
    """RSS growth of one no_grad forward per case, with its ratio to the heads one at a time."""
    s = result.config.standard
    shape = f"B={s.B}, T={s.T}, C={s.C}, n_head={s.n_head}"
    table = Table(
        title=pick(
            lang, f"RSS 增长（no_grad 前向）{shape}", f"RSS growth, no_grad forward, {shape}"
        )
    )
    table.add_column(pick(lang, "实现", "implementation"))
    table.add_column("MiB", justify="right")
    table.add_column(pick(lang, "最小–最大", "min–max"), justify="right")
    table.add_column(pick(lang, "×逐个头", "×heads one at a time"), justify="right")
    table.add_column(pick(lang, "进程数", "processes"), justify="right")
    for row in result.memory:
        if row.status != "ok":
            table.add_row(row.label, _STATUS[lang].get(row.status, row.status), row.note, "", "")
            continue
        spread = f"{short(row.rss_mib_min)}–{short(row.rss_mib_max)}"
        ratio = _ratio(ratio_to_reference(result.memory, row.case))
        table.add_row(row.label, short(row.rss_mib), spread, ratio, str(row.repeats))
    return table


def fits_table(fits: list[FitRow], lang: str) -> Table:
    """Fitted growth exponents p (time ∝ T^p, memory ∝ T^p) of every sweep implementation."""
    title = pick(
        lang,
        "随 T 的增长指数（对数-对数最小二乘）",
        "growth exponents in T (log-log least squares)",
    )
    table = Table(title=title)
    _impl_columns(table, lang)
    table.add_column(pick(lang, "模式", "mode"))
    for zh, en in (
        ("时间指数", "time p"),
        ("内存指数", "memory p"),
        ("T 范围", "T range"),
        ("点数", "points"),
    ):
        table.add_column(pick(lang, zh, en), justify="right")
    for f in fits:
        span = f"{f.T_min}..{f.T_max}" if f.points else "—"
        p_time, p_memory = _num(f.time_exponent, 2), _num(f.memory_exponent, 2)
        table.add_row(f.level, f.label, f.mode, p_time, p_memory, span, str(f.points))
    return table


def bars_table(bars: list[Bar], lang: str) -> Table:
    """The performance bars: measured value, limit, and whether this run meets it."""
    table = Table(title=pick(lang, "目标（本次运行的数字）", "bars (this run's figures)"))
    table.add_column(pick(lang, "比较", "comparison"))
    table.add_column(pick(lang, "测得", "measured"), justify="right")
    table.add_column(pick(lang, "目标", "bar"), justify="right")
    table.add_column("")
    marks = {True: "✓", False: "✗", None: ""}
    for bar in bars:
        value = "—" if bar.value is None else f"{bar.value:.2f}"
        table.add_row(bar.what[lang], value, bar.limit, marks[bar.ok])
    return table


def skip_notes(rows: list[BenchRow], lang: str) -> list[str]:
    """One line per distinct reason a measurement was skipped, refused or failed, with where."""
    grouped: dict[str, list[BenchRow]] = defaultdict(list)
    for r in rows:
        if r.status != "ok":
            grouped[f"{_status(r, lang)}: {r.note}"].append(r)
    lines = []
    for reason, where in grouped.items():
        impls = ", ".join(dict.fromkeys(r.impl for r in where))
        Ts = ", ".join(str(T) for T in sorted({r.T for r in where}))
        modes = ", ".join(dict.fromkeys(r.mode for r in where))
        lines.append(f"{reason} [{impls}; T={Ts}; {modes}]")
    return lines
