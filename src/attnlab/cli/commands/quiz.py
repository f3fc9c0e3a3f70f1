"""``attnlab quiz``: knowledge checks and graded exercises in the terminal, saved as you go."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from attnlab.cli._common import fail
from attnlab.cli._store import StoreOptions, with_store

ORDER = 81


def _ask(prompt: str) -> str | None:
    typer.echo(prompt, nl=False)
    if getattr(sys.stdin, "errors", None) == "strict" and hasattr(sys.stdin, "reconfigure"):
        # A byte that is not UTF-8 arrives as a lone surrogate, which the quiz's text check
        # names (U+DCFF is byte 0xff), instead of a UnicodeDecodeError from the stream.
        sys.stdin.reconfigure(errors="surrogateescape")
    line = sys.stdin.readline()
    if not line:
        typer.echo("")
        return None
    return line.rstrip("\r\n")


def register(app: typer.Typer) -> None:
    """Add ``quiz`` to ``app``."""

    @app.command("quiz")
    @with_store
    def quiz_command(
        ctx: typer.Context,
        opts: StoreOptions,
        section: Annotated[
            int | None,
            typer.Option(
                "--section", help="Only this section (0 = core goal, 1-19).", show_default=False
            ),
        ] = None,
        review: Annotated[
            bool, typer.Option("--review", help="Go through the checks marked 'review again'.")
        ] = False,
    ) -> None:
        """Answer the knowledge checks; resumes where you stopped. Type q to stop."""
        from attnlab.cli.quiz_session import Quiz, QuizStopped, plan, progress_line, section_label
        from attnlab.core.example import SECTION_COUNT
        from attnlab.text.errors import InputError
        from attnlab.text.i18n import error_message, pick

        chosen, last = opts.lang, SECTION_COUNT - 1
        if section is not None and not 0 <= section <= last:
            fail(pick(chosen, f"--section 应为 0-{last}（0 = 核心目标），收到的是 {section}",
                      f"--section must be 0-{last} (0 = core goal), got {section}"))  # fmt: skip
        if section is not None and review:
            fail(pick(chosen, "--section 和 --review 只能选一个，收到了两个",
                      "use either --section or --review, got both"))  # fmt: skip
        with opts.open() as store:
            store.check_writable()  # refuse a read-only file before asking anything
            quiz = Quiz(store, chosen, _ask, typer.echo)
            from attnlab.grading import practice

            done = {s for s, (_, ok) in practice.mastery(store.attempts()).items() if ok}
            todo = plan(store.summary(), section, review, set(practice.SECTIONS) - done)
            if not todo:
                typer.echo(
                    quiz.t("没有要复习的内容。", "Nothing to review.")
                    if review
                    else quiz.t(
                        "20 节都已完成；用 --review 或 --section N 复习。",
                        "All 20 sections are done; use --review or --section N.",
                    )
                )
                return
            try:
                quiz.run(todo, resume=section is None and not review)
            except InputError as exc:  # a typed line over its limit or not UTF-8: not saved
                fail(error_message(exc, chosen))
            except (QuizStopped, KeyboardInterrupt) as stop:
                at = section_label(store.summary().next_section() or 0, chosen)
                typer.echo(
                    quiz.t(
                        f"已保存。下次从{at}继续：attnlab quiz",
                        f"Saved. Run attnlab quiz to continue from {at}.",
                    )
                )
                typer.echo(progress_line(store.summary(), chosen))
                if isinstance(stop, KeyboardInterrupt):
                    raise typer.Exit(130) from None
