"""``attnlab bench``: time and memory of every attention implementation, as a table and CSV."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from attnlab.cli._common import LangOption, fail, lang_of

if TYPE_CHECKING:  # the bench package loads torch: only when the command runs
    from attnlab.bench import BenchConfig, BenchResult

ORDER = 60
HELP = (
    "Benchmark every attention implementation (lesson modules, fused backends, "
    "nn.MultiheadAttention, the tiled kernel) against F.scaled_dot_product_attention: forward "
    "and forward+backward time, GFLOP/s, peak memory, a T sweep with growth exponents, and the "
    "RSS growth of one inference forward (fresh process per case). Prints tables and writes CSV. "
    "The full run takes about 12 minutes."
)


def _fits_path(csv_path: Path) -> Path:
    return csv_path.with_name(f"{csv_path.stem}-fits.csv")


def _memory_path(csv_path: Path) -> Path:
    return csv_path.with_name(f"{csv_path.stem}-memory.csv")


def register(app: typer.Typer) -> None:
    """Add ``bench`` to ``app``."""

    @app.command("bench", help=HELP)
    def bench(
        ctx: typer.Context,
        quick: Annotated[
            bool,
            typer.Option(
                "--quick", help="About one minute: B=1 standard shape, T sweep up to 4096."
            ),
        ] = False,
        csv_path: Annotated[
            Path,
            typer.Option(
                "--csv",
                help="Where to write the rows; fits go to NAME-fits.csv, RSS to NAME-memory.csv.",
            ),
        ] = Path("attnlab-bench.csv"),
        busy: Annotated[
            bool,
            typer.Option(
                "--busy",
                help="Run next to one competing busy process (started here, always stopped): "
                "the same tables under contention.",
            ),
        ] = False,
        markdown: Annotated[
            Path | None,
            typer.Option("--markdown", help="Also write the bars and bar-shape table as Markdown."),
        ] = None,
        tiny: Annotated[bool, typer.Option("--tiny", hidden=True)] = False,
        lang: LangOption = None,
    ) -> None:
        language = lang_of(ctx, lang)
        for option, path in (("--csv", csv_path), ("--markdown", markdown)):
            if path is None:
                continue
            if not path.parent.is_dir():
                fail(f"{option}: directory {path.parent} does not exist (path {path})")
            if path.is_dir():
                fail(f"{option} must be a file path, got the directory {path}")
        # torch-heavy and rich-heavy modules load only when this command runs.
        from attnlab.bench import CONFIGS, count_steps, write_csv

        config = CONFIGS["tiny" if tiny else "quick" if quick else "full"]
        result = _run_with_progress(config, count_steps(config), language, busy)
        try:
            write_csv(csv_path, result.rows)
            write_csv(_fits_path(csv_path), result.fits)
            write_csv(_memory_path(csv_path), result.memory)
        except OSError as exc:
            fail(f"--csv: cannot write {csv_path}: {exc}")
        _print_report(result, language, csv_path)
        if markdown is not None:
            size = ["--tiny"] if tiny else ["--quick"] if quick else []
            flags = [*size, *(["--busy"] if busy else []), "--csv", str(csv_path)]
            command = shlex.join(
                ["attnlab", "--lang", language, "bench", *flags, "--markdown", str(markdown)]
            )
            _write_markdown(result, language, markdown, command)


def _run_with_progress(config: BenchConfig, total: int, lang: str, busy: bool) -> BenchResult:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from attnlab.bench import run_bench
    from attnlab.text.i18n import pick

    columns = (
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()
    )  # fmt: skip
    with Progress(*columns, transient=True) as progress:
        task = progress.add_task(pick(lang, "测量中", "measuring"), total=total)
        started = False

        def on_step(description: str) -> None:
            nonlocal started
            if started:
                progress.advance(task)
            started = True
            progress.update(task, description=description)

        result = run_bench(config, on_step, busy=busy)
        progress.advance(task)
    return result


def _print_report(result: BenchResult, lang: str, csv_path: Path) -> None:
    from rich.console import Console

    from attnlab.bench import tables
    from attnlab.bench.bars import check_bars
    from attnlab.bench.workloads import FORWARD, FORWARD_BACKWARD
    from attnlab.text.i18n import pick

    console = Console(width=None if sys.stdout.isatty() else 160)  # files get full rows
    for line in tables.context_lines(result, lang):
        console.print(line, markup=False, highlight=False)
    console.print(tables.shape_table(result, "bar", lang))
    console.print(tables.shape_table(result, "standard", lang))
    for mode in (FORWARD, FORWARD_BACKWARD):
        console.print(tables.sweep_table(result, mode, lang))
        console.print(tables.sweep_table(result, mode, lang, memory=True))
    console.print(tables.fits_table(result.fits, lang))
    console.print(tables.memory_table(result, lang))
    console.print(tables.bars_table(check_bars(result), lang))
    for note in tables.skip_notes(result.rows, lang):
        console.print(note, markup=False, highlight=False, soft_wrap=True)
    fits, memory = _fits_path(csv_path), _memory_path(csv_path)
    console.print(
        pick(
            lang, f"已写入 {csv_path}、{fits} 和 {memory}", f"wrote {csv_path}, {fits} and {memory}"
        ),
        highlight=False,
    )


def _write_markdown(result: BenchResult, lang: str, path: Path, command: str) -> None:
    from attnlab.bench.markdown import report
    from attnlab.text import atomic
    from attnlab.text.i18n import pick

    try:
        atomic.write_text(path, report(result, lang, command))
    except OSError as exc:
        fail(f"--markdown: cannot write {path}: {exc}")
    print(pick(lang, f"已写入 {path}", f"wrote {path}"))
