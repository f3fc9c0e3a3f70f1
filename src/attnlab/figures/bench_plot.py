"""``attnlab bench`` results drawn: time and peak memory against T, one line per implementation.

The CSV is read with :func:`attnlab.bench.read_rows`, so the figure can be redrawn without
re-running the benchmark. Only the ``sweep`` rows (one shape, T growing) are drawn, one row of
panels per mode; the legend carries each line's fitted growth exponents (time, memory ∝ T^p).
Layer implementations are solid lines, kernels dashed: compare only within a level.
"""

from __future__ import annotations

from pathlib import Path

from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from attnlab.bench import BenchRow, FitRow, fit_exponents, read_rows
from attnlab.figures.heatmap import new_figure
from attnlab.figures.labels import text
from attnlab.text.errors import InputError

#: Markers cycle with the colours so lines stay apart in greyscale print.
MARKERS = ("o", "s", "D", "^", "v", "P", "X", "<", ">", "*")


def load_bench_rows(path: Path) -> list[BenchRow]:
    """The sweep rows of a bench CSV; :class:`InputError` (one line) if it is not one."""
    if not path.is_file():
        raise InputError(f"--csv: file not found: {path} (write one with `attnlab bench`)")
    try:
        rows = read_rows(path)
    except (KeyError, ValueError, TypeError) as exc:
        raise InputError(f"--csv: {path} is not a CSV written by `attnlab bench` ({exc})") from None
    sweep = [r for r in rows if r.section == "sweep" and r.status == "ok"]
    if not sweep:
        raise InputError(f"--csv: expected measured sweep rows in {path}, found none")
    return sweep


#: (CSV column, title key) of the two panels of a row.
_PANELS = (("median_ms", "bench_time"), ("peak_mib", "bench_memory"))


def plot_bench(rows: list[BenchRow], lang: str = "zh") -> Figure:
    """Log-log time (ms) and peak memory (MiB) against T, per implementation; a row per mode.

    Example::

        >>> from attnlab.bench import BenchRow
        >>> rows = [BenchRow("sweep", "sdpa", "F.sdpa", "kernel", "forward", 1, t, 64, 1, 64,
        ...                  median_ms=t / 100, peak_mib=t / 10) for t in (256, 512)]
        >>> len(plot_bench(rows, lang="en").axes)
        2
    """
    modes = list(dict.fromkeys(r.mode for r in rows))
    impls = list(dict.fromkeys(r.impl for r in rows))
    Ts = sorted({r.T for r in rows})
    fits = {(f.impl, f.mode): f for f in fit_exponents(rows, Ts[0], Ts[-1])}
    fig = new_figure(16.0, 4.4 * len(modes) + 0.6)
    axes = fig.subplots(len(modes), 2, squeeze=False)
    for m, mode in enumerate(modes):
        for i, impl in enumerate(impls):
            line = sorted((r for r in rows if (r.impl, r.mode) == (impl, mode)), key=lambda r: r.T)
            if not line:
                continue
            style = {
                "color": colormaps["tab10"](i % 10),
                "marker": MARKERS[i % len(MARKERS)],
                "linestyle": "-" if line[0].level == "layer" else "--",  # layers solid
                "label": _legend_label(line[0], fits.get((impl, mode)), lang),
            }
            for ax, (column, _) in zip(axes[m], _PANELS, strict=True):
                points = [(r.T, getattr(r, column)) for r in line if getattr(r, column)]
                if points:
                    ax.plot([t for t, _ in points], [y for _, y in points], **style)
        for ax, (_, key) in zip(axes[m], _PANELS, strict=True):
            _style_axes(ax, Ts, f"{mode}: {text(key, lang)}", lang)
        # One legend per mode, outside the panels: ten lines inside would hide the data.
        handles, labels = axes[m, 0].get_legend_handles_labels()
        axes[m, 1].legend(handles, labels, fontsize=8.5, loc="center left",
                          bbox_to_anchor=(1.02, 0.5), title=mode)  # fmt: skip
    first = rows[0]
    title = text("bench_title", lang, B=first.B, H=first.n_head, d=first.d_head)
    fig.suptitle(title, fontsize=12)
    return fig


def _legend_label(row: BenchRow, fit: FitRow | None, lang: str) -> str:
    """``"kernel · F.sdpa  T^1.02 / T^1.13"``: the fitted time and memory exponents."""
    name = f"{row.level} · {row.label}"
    if fit is None:
        return name
    exps = [f"T^{e:.2f}" if e is not None else "–" for e in (fit.time_exponent,
                                                              fit.memory_exponent)]  # fmt: skip
    return f"{name}   {text('bench_fit', lang, time=exps[0], memory=exps[1])}"


def _style_axes(ax: Axes, Ts: list[int], title: str, lang: str) -> None:
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(Ts, labels=[f"{t:,}" for t in Ts])
    ax.set_xlabel(text("tokens_axis", lang))
    ax.set_title(title, fontsize=11)
    ax.grid(True, color="#dddddd", linewidth=0.8)
