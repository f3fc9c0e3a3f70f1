"""Which figures a ``plot`` request makes, their predictable file names, and safe saving.

The kinds, and the lesson figures drawn by kind alone, are those of
:mod:`attnlab.figures.registry`.

Names: ``weights-A-B.png``, ``weights-A.png``, ``chain-A.png``, ``scale.png``, ``mask.png``,
``cost.png``, ``bench.png``; a learner's input adds its file stem (``weights-mine-0-1.png``)
and, with several heads, the chain adds the head (``chain-mine-A-h1.png``) and one figure of
the heads' concatenation and W_O per prompt (``chain-mine-A-merge.png``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import IO

from matplotlib.figure import Figure

from attnlab.figures.chain import plot_chain
from attnlab.figures.merge import plot_merge
from attnlab.figures.registry import BENCH_KIND, KINDS, SECTION_KINDS, SOURCE_KINDS
from attnlab.figures.source import MAX_PANELS, PlotSource
from attnlab.figures.weights import plot_weights
from attnlab.text import atomic
from attnlab.text.errors import InputError

FORMATS: tuple[str, ...] = ("png", "svg")
#: Pixels per inch of a PNG: sharp on a laptop screen and in print.
PNG_DPI = 150
#: Most chain figures (one per prompt and head) one request draws: each takes about a second.
MAX_FIGURES = 16


def _stem(kind: str, source: PlotSource, *parts: str) -> str:
    return "-".join(p for p in (kind, source.stem, *parts) if p)


def make_figures(
    kind: str, source: PlotSource | None, lang: str, csv_path: Path | None = None
) -> list[tuple[str, Figure]]:
    """Draw every figure of ``kind``: ``(file stem, figure)`` pairs, nothing written yet."""
    if kind == BENCH_KIND:
        # Imported here: the bench package (and its workloads) loads only for this figure.
        from attnlab.figures.bench_plot import load_bench_rows, plot_bench

        if csv_path is None:
            raise InputError("bench: expected --csv FILE (a CSV written by `attnlab bench`)")
        return [(BENCH_KIND, plot_bench(load_bench_rows(csv_path), lang))]
    if kind in SECTION_KINDS:
        return [(kind, SECTION_KINDS[kind].draw(lang))]
    if kind not in SOURCE_KINDS or source is None:
        raise InputError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    if kind == "weights":
        names = [source.names[b] for b in source.shown]
        panels = len(names) * source.num_heads
        if panels > MAX_PANELS:
            raise InputError(
                f"weights: {panels} panels (B × n_head) is too many to read in one figure "
                f"(at most {MAX_PANELS}); pick one prompt with --prompt"
            )
        return [(_stem("weights", source, *names), plot_weights(source, lang))]
    per_prompt = source.num_heads + 1 if source.multi_head else 1  # the heads, then their merge
    count = len(source.shown) * per_prompt
    merge = ", plus each prompt's merge" if source.multi_head else ""
    if count > MAX_FIGURES:
        raise InputError(
            f"chain: {count} figures (one per prompt and head{merge}) is too many for "
            f"one command (at most {MAX_FIGURES}); pick one prompt with --prompt"
        )
    figures = []
    for b in source.shown:
        name = source.names[b]
        for h in range(source.num_heads):
            head = f"h{h + 1}" if source.multi_head else ""
            figures.append((_stem("chain", source, name, head), plot_chain(source, b, h, lang)))
        if source.multi_head:
            figures.append((_stem("chain", source, name, "merge"), plot_merge(source, b, lang)))
    return figures


def _saver(fig: Figure, fmt: str) -> Callable[[IO[bytes]], None]:
    return lambda f: fig.savefig(f, format=fmt, dpi=PNG_DPI)


def save_figures(figures: list[tuple[str, Figure]], out: Path, fmt: str) -> list[Path]:
    """Write each figure as ``out/<stem>.<fmt>``; a file appears only once fully written."""
    if fmt not in FORMATS:
        raise InputError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if out.exists() and not out.is_dir():
        raise InputError(f"--out: expected a directory but {out} is a file")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for stem, fig in figures:
        path = out / f"{stem}.{fmt}"
        atomic.write_with(path, _saver(fig, fmt), binary=True)
        written.append(path)
    return written
