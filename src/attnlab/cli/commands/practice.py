"""``attnlab practice``: a fresh exercise of hand-sized numbers for one section's computation,
graded by the one grader with the mistake named; ``--json`` prints it for ``check --input``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from attnlab.cli._common import fail
from attnlab.cli._store import StoreOptions, with_store
from attnlab.cli.commands.quiz import _ask
from attnlab.text.jsonable import dumps

if TYPE_CHECKING:
    from attnlab.grading.practice import Dealt
    from attnlab.progress.store import ProgressStore

ORDER = 82
#: The keys the learner types at the prompt, besides an answer.
QUIT, SOLUTION, NEW = ("q", "quit", "exit"), ("s", "solution", "?"), ("n", "new")


def register(app: typer.Typer) -> None:
    """Add ``practice`` to ``app``."""

    @app.command("practice")
    @with_store
    def practice_command(
        ctx: typer.Context,
        section: Annotated[
            int,
            typer.Option(
                "--section",
                help="4 (scores), 5 (weights), 6 (output), 8 (scaled "
                "scores), 9 (shapes), 11 (masked scores) or 16 (logits).",
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
        *,
        opts: StoreOptions,
    ) -> None:
        """Practise a section's computation on fresh numbers: type your answer, s for the
        worked solution, n for new numbers, q to stop. Answers are saved: 3 dealt exercises
        right in a row without the solution master the section (attnlab progress)."""
        from attnlab.grading import practice
        from attnlab.text.i18n import pick

        chosen = opts.lang
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
        with opts.open() as store:
            _session(store, dealt, section, chosen, hint)


def _session(store: ProgressStore, dealt: Dealt, section: int, lang: str, hint: str) -> None:
    """Read answers until q or the end of input; every graded answer and every solution shown
    is saved under ``practice-N``."""
    from attnlab.cli.quiz_session import save_practice
    from attnlab.grading import ladder, practice
    from attnlab.grading.answers import verdict_data
    from attnlab.text.errors import InputError
    from attnlab.text.i18n import error_message, pick

    key = practice.attempt_id(section)
    wrong = 0  # wrong tries in a row at these numbers: the help ladder's rung
    while (line := _ask("> ")) is not None:
        word = line.strip().lower()
        if word in QUIT:
            return
        if not word:  # an empty line is no answer: say what to type, as the quiz does
            typer.echo(hint)
            continue
        if word in SOLUTION:
            typer.echo(practice.solution_text(dealt, lang))
            save_practice(store, dealt, "", None)
            continue
        if word in NEW:
            dealt, wrong = practice.deal(section), 0
            typer.echo("\n" + practice.exercise_text(dealt, lang) + "\n" + hint)
            continue
        try:
            verdict = dealt.grade(line)
        except InputError as exc:
            typer.echo(error_message(exc, lang))
            continue
        typer.echo(practice.verdict_line(dealt, verdict, line, lang))
        if verdict.kind in ("right", "wrong"):
            save_practice(store, dealt, line, verdict)
        wrong, data = ladder.next_run(wrong, verdict.kind), verdict_data(verdict)
        helped = practice.help_text(dealt, data, wrong, lang, line)
        if helped is not None:
            typer.echo(helped)
        if practice.reveals(data, wrong):
            typer.echo(practice.solution_text(dealt, lang))
            save_practice(store, dealt, "", None)  # shown: these numbers count no more
        done = practice.streak(store.attempts(key))
        if verdict.correct:
            row = pick(lang, f"连续答对 {done}/{practice.MASTERY} 组（n 换一组数）",
                       f"{done} of {practice.MASTERY} right in a row (n: new numbers)")  # fmt: skip
            typer.echo(row)
