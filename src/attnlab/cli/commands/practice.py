"""``attnlab practice``: a fresh exercise of hand-sized numbers for one section's computation,
graded by the one grader with the mistake named; ``--json`` prints it for ``check --input``."""

from __future__ import annotations

from typing import Annotated

import typer

from attnlab.cli._common import LangOption, fail, lang_of
from attnlab.cli.commands.quiz import _ask
from attnlab.text.jsonable import dumps

ORDER = 82
#: The keys the learner types at the prompt, besides an answer.
QUIT, SOLUTION, NEW = ("q", "quit", "exit"), ("s", "solution", "?"), ("n", "new")


def register(app: typer.Typer) -> None:
    """Add ``practice`` to ``app``."""

    @app.command("practice")
    def practice_command(
        ctx: typer.Context,
        section: Annotated[
            int,
            typer.Option(
                "--section",
                help="4 (scores), 5 (weights), 6 (output), 8 (scaled "
                "scores) or 11 (masked scores).",
            ),
        ] = 5,
        seed: Annotated[
            int | None,
            typer.Option(
                "--seed",
                help="The same seed deals the same exercise; none: a new one.",
                show_default=False,
            ),
        ] = None,
        as_json: Annotated[
            bool,
            typer.Option(
                "--json",
                help="Print the exercise as JSON: id, section, input (an "
                "--input document), ask (for attnlab check) and text.",
            ),
        ] = False,
        lang: LangOption = None,
    ) -> None:
        """Practise a section's computation on fresh numbers: type your answer, s for the
        worked solution, n for new numbers, q to stop."""
        from attnlab.grading import practice
        from attnlab.text.errors import InputError
        from attnlab.text.i18n import error_message, pick

        chosen = lang_of(ctx, lang)
        known = ", ".join(str(s) for s in practice.SECTIONS)
        if section not in practice.SECTIONS:
            fail(pick(chosen, f"--section 应为 {known} 之一，收到的是 {section}",
                      f"--section must be one of {known}, got {section}"))  # fmt: skip
        if seed is not None and seed < 0:
            fail(pick(chosen, f"--seed 应为 0 或更大的整数，收到的是 {seed}",
                      f"--seed must be 0 or more, got {seed}"))  # fmt: skip
        dealt = practice.deal(section, seed)
        if as_json:
            typer.echo(dumps(practice.document(dealt, chosen)))
            return
        hint = pick(
            chosen,
            "（输入答案；s 看解答，n 换一组数，q 结束）",
            "(type your answer; s for the solution, n for new numbers, q to stop)",
        )
        typer.echo(practice.exercise_text(dealt, chosen) + "\n" + hint)
        while (line := _ask("> ")) is not None:
            word = line.strip().lower()
            if word in QUIT:
                return
            if word in SOLUTION:
                typer.echo(practice.solution_text(dealt, chosen))
                continue
            if word in NEW:
                dealt = practice.deal(section)
                typer.echo("\n" + practice.exercise_text(dealt, chosen) + "\n" + hint)
                continue
            try:
                verdict = dealt.grade(line)
            except InputError as exc:
                typer.echo(error_message(exc, chosen))
                continue
            typer.echo(practice.verdict_line(verdict, line, chosen))
