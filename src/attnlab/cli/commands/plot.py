"""``attnlab plot KIND``: save the lesson's figures as PNG or SVG and print their paths."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from attnlab.cli._common import LangOption, fail, lang_of
from attnlab.text.i18n import error_message

ORDER = 50

_KIND_HELP = (
    "weights (heatmaps of the attention weights), chain (every stage of one prompt), "
    "scale (section 8: why divide by sqrt(d_k)), mask (section 11: 0 versus -inf), "
    "cost (section 17: B*n_head*T^2), bench (time and memory from an `attnlab bench` CSV)."
)


def register(app: typer.Typer) -> None:
    """Add ``plot`` to ``app``."""

    @app.command("plot", help=f"Draw a figure of the lesson. KIND: {_KIND_HELP}")
    def plot(
        ctx: typer.Context,
        kind: Annotated[str, typer.Argument(help="weights, chain, scale, mask, cost or bench.")],
        prompt: Annotated[
            str, typer.Option(help="A, B or all (with --input: a batch index or all).")
        ] = "all",
        input_file: Annotated[
            Path | None,
            typer.Option("--input", help="JSON/TOML file with x, w_q, w_k, w_v (weights, chain)."),
        ] = None,
        out: Annotated[Path, typer.Option(help="Directory to write the figures into.")] = Path("."),
        fmt: Annotated[str, typer.Option("--format", help="png or svg.")] = "png",
        csv_path: Annotated[
            Path | None,
            typer.Option("--csv", help="bench only: the CSV `attnlab bench` wrote."),
        ] = None,
        lang: LangOption = None,
    ) -> None:
        language = lang_of(ctx, lang)
        # matplotlib loads only here, so other commands start without it.
        from attnlab.core.example import prompt_rows
        from attnlab.figures import files, registry
        from attnlab.figures.source import input_source, lesson_source
        from attnlab.inputs.model import load_input
        from attnlab.text.errors import InputError

        if kind not in registry.KINDS:
            fail(f"KIND must be one of {', '.join(registry.KINDS)}, got {kind!r}")
        if fmt not in files.FORMATS:
            fail(f"--format must be one of {', '.join(files.FORMATS)}, got {fmt!r}")
        if kind not in registry.SOURCE_KINDS and input_file is not None:
            fail(f"--input applies to weights and chain, not {kind}")
        if kind != registry.BENCH_KIND and csv_path is not None:
            fail(f"--csv applies to bench, not {kind}")
        try:
            source = None
            if kind in registry.SOURCE_KINDS:
                source = (
                    lesson_source(language) if input_file is None
                    else input_source(load_input(input_file))
                )  # fmt: skip
                source = source.select(prompt_rows(prompt, len(source.names)))
            figures = files.make_figures(kind, source, language, csv_path)
            written = files.save_figures(figures, out, fmt)
        except (InputError, OSError) as exc:
            fail(error_message(exc, language))
        for path in written:
            print(path)
