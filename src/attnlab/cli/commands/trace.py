"""``attnlab trace``, ``attnlab shapes`` and ``attnlab cost``: look inside attention."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from attnlab.cli._common import LangOption, fail, lang_of
from attnlab.text.i18n import error_message

if TYPE_CHECKING:
    from attnlab.inputs.model import LabInput

if TYPE_CHECKING:
    from attnlab.inputs.model import LabInput

ORDER = 20


class Format(StrEnum):
    text = "text"
    markdown = "markdown"
    json = "json"


def register(app: typer.Typer) -> None:
    """Add ``trace``, ``shapes`` and ``cost`` to ``app``."""

    @app.command("trace")
    def trace_command(
        ctx: typer.Context,
        prompt: Annotated[str, typer.Option(help="A, B, ... or all.")] = "all",
        input_file: Annotated[
            Path | None, typer.Option("--input", help="Your own numbers: a JSON or TOML file.")
        ] = None,
        stage: Annotated[str | None, typer.Option(help="Show only this stage.")] = None,
        fmt: Annotated[Format, typer.Option("--format", help="text, markdown or json.")] = (
            Format.text
        ),
        step: Annotated[bool, typer.Option(help="Wait for Enter between stages.")] = False,
        precision: Annotated[int, typer.Option(min=0, max=12, help="Decimals shown.")] = 4,
        lang: LangOption = None,
    ) -> None:
        """Every stage from X to the head output, as tables labelled with the tokens."""
        from attnlab.text.errors import InputError

        language = lang_of(ctx, lang)
        try:
            _trace(language, prompt, input_file, stage, fmt, step, precision)
        except InputError as exc:
            fail(error_message(exc, language))

    @app.command("shapes")
    def shapes_command(
        ctx: typer.Context,
        batch: Annotated[int, typer.Option(min=1, max=64, help="B")] = 1,
        tokens: Annotated[int, typer.Option(min=1, max=4096, help="T")] = 3,
        embed: Annotated[int, typer.Option(min=1, max=4096, help="C")] = 4,
        heads: Annotated[int, typer.Option(min=1, max=64, help="n_head")] = 2,
        lang: LangOption = None,
    ) -> None:
        """Section 9's shape table, measured in CausalSelfAttention."""
        if embed % heads:
            from attnlab.text.i18n import pick

            got = f"embed={embed}, heads={heads}"
            fail(pick(lang_of(ctx, lang), f"--embed 应能被 --heads 整除，收到 {got}",
                      f"--embed must be divisible by --heads, got {got}"))  # fmt: skip
        from attnlab.cli._render import print_shapes

        print_shapes(lang_of(ctx, lang), batch, tokens, embed, heads)

    @app.command("cost")
    def cost_command(
        ctx: typer.Context,
        tokens: Annotated[
            list[int] | None, typer.Option(min=1, max=10**7, help="Sequence lengths T to compare.")
        ] = None,
        batch: Annotated[int, typer.Option(min=1, max=4096, help="B")] = 2,
        heads: Annotated[int, typer.Option(min=1, max=4096, help="n_head")] = 2,
        lang: LangOption = None,
    ) -> None:
        """Section 17's score-element table: B·n_head·T², ratios and float32 memory."""
        from attnlab.cli._render import print_cost
        from attnlab.core.example import COST_CHECK

        print_cost(lang_of(ctx, lang), list(tokens or COST_CHECK.tokens), batch, heads)


def _trace(
    lang: str,
    prompt: str,
    input_file: Path | None,
    stage: str | None,
    fmt: Format,
    step: bool,
    precision: int,
) -> None:
    from attnlab.content.trace import build_views, input_document, render_markdown
    from attnlab.inputs.model import LabInput, load_input
    from attnlab.text.fmt import escape_json_text
    from attnlab.text.jsonable import dumps

    inp = load_input(input_file) if input_file else LabInput.lesson(lang)
    if fmt is Format.json:
        if input_file:
            check_document_fits(inp)
            doc = input_document(inp, prompt, stage)
        else:
            doc = _lesson_json(inp, lang, prompt, stage)
        # Labels keep their characters in the parsed JSON, but never reach the terminal raw.
        print(escape_json_text(dumps(doc)))
        return
    if fmt is Format.text:
        inp.check_display()
    else:
        inp.check_display({"zh": "Markdown 表格", "en": "Markdown tables"})
    from attnlab.lesson import numbers

    lesson = None if input_file else numbers.stages()  # the lesson's numbers are computed once
    views = build_views(inp, lang, prompt, stage, precision, lesson)
    if fmt is Format.markdown:
        print(render_markdown(views, lang))
        return
    from attnlab.cli._render import print_views

    print_views(views, lang, step)


def document_numbers(inp: LabInput) -> int:
    """Numbers in the ``trace --format json`` document of ``inp`` (an upper bound): the input
    fields, then per prompt x, every head's stages (each repeats x) with five ``[T, T]`` tables
    (four score stages and the mask), and with several heads the concatenation and W_O."""
    B, T, C = inp.x.shape
    d_qk, d_v = inp.w_q.size(1), inp.w_v.size(1)
    weights = C * (2 * d_qk + d_v + C)
    rows = B * T * ((4 + inp.heads) * C + 2 * d_qk + 2 * d_v)
    return 1 + weights + rows + 5 * B * inp.heads * T * T  # 1: num_heads


def check_document_fits(inp: LabInput) -> None:
    """Refuse, before building anything, a JSON document that would not fit the budget."""
    from attnlab.core import memory_guard

    numbers = document_numbers(inp)
    memory_guard.check_budget(
        inp.stage_bytes() + numbers * memory_guard.DOCUMENT_BYTES_PER_NUMBER,
        {"zh": f"trace --format json：各阶段和含 {numbers:,} 个数的文档",
         "en": f"trace --format json: the stages and a document of {numbers:,} numbers"},
        {"zh": "文档随 B·n_head·T² 增长；请用更短的序列或更少的提示",
         "en": "it grows with B·n_head·T²; use a shorter sequence or fewer prompts"},
    )  # fmt: skip


def _lesson_json(inp: LabInput, lang: str, prompt: str, stage: str | None) -> dict:
    """The scripts' document (numbers from :mod:`attnlab.lesson.numbers`), stages filtered."""
    from attnlab.cli.walk import lesson_document
    from attnlab.content.trace import check_stage, filter_stages
    from attnlab.core.example import prompt_rows

    rows = prompt_rows(prompt, inp.x.size(0))
    check_stage(inp, stage)
    doc = lesson_document(lang)
    doc["stages"] = filter_stages(doc["stages"], rows, stage)
    return doc
