"""``attnlab check``: grade hand-computed numbers and name the mistake behind a wrong answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from attnlab.cli._common import LangOption, fail, lang_of
from attnlab.text.fmt import typed, vec
from attnlab.text.i18n import error_message, pick

if TYPE_CHECKING:
    from attnlab.grading.grade import Address, Verdict
    from attnlab.grading.handcheck import Answer

ORDER = 45
HELP = (
    "Check numbers you computed by hand for a stage of the lesson example (or of --input FILE). "
    "Give --stage/--prompt/--row/--values, or an answer file (TOML \\[\\[answer]] tables, or "
    "JSON) with several stages. Exit 0 all right, 1 any wrong (or not as many numbers as asked), "
    "2 unreadable input."
)


def _where(at: Address | None, lang: str, multihead: bool) -> str:
    """``weights (prompt A, head 2, row 1)``: prompts by letter, heads from 1, rows from 0."""
    if at is None:
        return "?"
    head = pick(lang, f"，第 {at.head} 头", f", head {at.head}") if multihead else ""
    row = pick(lang, f"，第 {at.row} 行", f", row {at.row}") if at.row is not None else ""
    name = at.to_json()["prompt"]
    return pick(
        lang, f"{at.stage}（Prompt {name}{head}{row}）", f"{at.stage} (prompt {name}{head}{row})"
    )


def render(v: Verdict, lang: str, multihead: bool = False, text: str = "") -> str:
    """One answer's verdict in the answer service's words
    (:func:`attnlab.grading.reasons.say`), after the place it is about; a wrong answer also
    shows the right numbers."""
    from attnlab.grading import answers, reasons

    where = _where(v.at, lang, multihead)
    entered = vec(v.given, 4, typed)
    line = reasons.say(answers.verdict_data(v), lang, entered, text=text)
    out = pick(lang, f"{where}：{line}", f"{where}: {line}")
    if v.kind == "wrong":
        tol = "±" + "/".join(dict.fromkeys(f"{t:.2g}" for t in v.tolerance))
        expected = vec(v.expected, 4, typed)
        out += pick(lang, f"\n  正确的数：{expected}（{tol}）",
                    f"\n  the right numbers: {expected} ({tol})")  # fmt: skip
    return out


def register(app: typer.Typer) -> None:
    """Add the ``check`` command to ``app``."""

    @app.command("check", help=HELP)
    def check(
        ctx: typer.Context,
        answers: Annotated[
            Path | None, typer.Argument(help="Answer file (.toml or .json) with several stages")
        ] = None,
        stage: Annotated[
            str | None,
            typer.Option(
                help="x, q, k, v, raw_scores, scaled_scores, "
                "masked_scores, weights, output or logits"
            ),
        ] = None,
        prompt: Annotated[str, typer.Option(help="A or B (a letter or index with --input)")] = "A",
        row: Annotated[int | None, typer.Option(help="Query row / token position")] = None,
        head: Annotated[
            int,
            typer.Option(
                min=1, help="Head number (1 = first, as trace shows it), multi-head --input"
            ),
        ] = 1,
        values: Annotated[str | None, typer.Option(help='Your numbers, e.g. "0.6 0.4"')] = None,
        input_file: Annotated[
            Path | None, typer.Option("--input", help="Your own numbers (JSON/TOML)")
        ] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print the verdicts as JSON")] = False,
        lang: LangOption = None,
    ) -> None:
        from attnlab.grading import handcheck
        from attnlab.text.errors import InputError

        chosen = lang_of(ctx, lang)
        try:
            todo = _answers(answers, stage, prompt, row, head, values)
            inp = handcheck.lab_input(input_file)
            verdicts = [handcheck.check_answer(a, inp) for a in todo]
        except InputError as exc:
            fail(error_message(exc, chosen))
        if as_json:
            typer.echo(json.dumps([v.to_json() for v in verdicts], ensure_ascii=False, indent=2))
        else:
            multihead = not inp.is_single_head
            pairs = zip(todo, verdicts, strict=True)
            typer.echo("\n".join(render(v, chosen, multihead, a.text) for a, v in pairs))
        raise typer.Exit(0 if all(v.correct for v in verdicts) else 1)


def _answers(
    answers: Path | None,
    stage: str | None,
    prompt: str,
    row: int | None,
    head: int,
    values: str | None,
) -> list[Answer]:
    from attnlab.grading import handcheck
    from attnlab.grading.answers import parse_numbers
    from attnlab.text.errors import input_error

    if answers is not None:
        if stage is not None or values is not None:
            raise input_error("both_answers")
        return handcheck.load_answers(answers)
    if stage is None or values is None:
        raise input_error("no_answer")
    typed = tuple(parse_numbers(values, "--values", infinity=True))
    return [handcheck.Answer(stage, prompt, typed, row, head, values)]
