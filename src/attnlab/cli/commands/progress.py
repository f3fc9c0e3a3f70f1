"""``attnlab progress``: the week's progress bar, what to review next, export/import/reset."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from attnlab.cli._common import fail
from attnlab.cli._store import StoreOptions, keep_for_subcommands, with_store
from attnlab.text.i18n import error_message, pick

if TYPE_CHECKING:
    from attnlab.progress.store import ProgressStore
    from attnlab.progress.summary import Summary

ORDER = 80

FileArgument = Annotated[str, typer.Argument(help="Path of the progress JSON file.")]


def register(app: typer.Typer) -> None:
    """Add the ``progress`` command group to ``app``."""
    group = typer.Typer(
        help="Your saved progress: summary, export, import, reset.", no_args_is_help=False
    )
    app.add_typer(group, name="progress")

    @group.callback(invoke_without_command=True)
    @with_store
    def progress_summary(ctx: typer.Context, opts: StoreOptions) -> None:
        """Print "Week progress: X of 20 sections (P%)" and what to review next."""
        keep_for_subcommands(ctx, opts)
        if ctx.invoked_subcommand is not None:
            return
        with opts.open() as store:  # a read-only file is read too
            typer.echo(summary_text(store.summary(), opts.lang))
            line = practice_line(store, opts.lang)
            if line:
                typer.echo(line)

    @group.command("export")
    @with_store
    def export_command(ctx: typer.Context, file: FileArgument, opts: StoreOptions) -> None:
        """Write your progress to FILE (JSON), replacing a regular file all at once (never a
        symbolic link or a device)."""
        from attnlab.progress.exchange_files import write_json_atomic
        from attnlab.text.errors import InputError

        chosen = opts.lang
        with opts.open() as store:
            try:
                write_json_atomic(file, store.export_dict(), keep=store.own_files())
            except InputError as exc:
                fail(error_message(exc, chosen))
            except OSError as exc:
                why = exc.strerror or exc
                fail(pick(chosen, f"{file}：无法写入导出文件（{why}）",
                          f"{file}: cannot write the export ({why})"))  # fmt: skip
            name = store.profile
        typer.echo(pick(chosen, f"已导出 {name} 的进度：{file}",
                        f"Exported the progress of {name} to {file}"))  # fmt: skip

    @group.command("import")
    @with_store
    def import_command(ctx: typer.Context, file: FileArgument, opts: StoreOptions) -> None:
        """Merge FILE into this profile (newer entries win); a bad file changes nothing."""
        from attnlab.progress.exchange import validate_export
        from attnlab.progress.exchange_files import read_export
        from attnlab.text.errors import InputError

        chosen = opts.lang
        try:  # the whole file is read and checked before the store is even opened
            data = read_export(file)
            validate_export(data)
        except InputError as exc:
            message = error_message(exc, chosen)
            fail(message if message.startswith(str(file)) else f"{file}: {message}")
        with opts.open() as store:
            counts = store.import_dict(data)  # a read-only or busy store: one line, exit 2
            typer.echo(pick(chosen,
                            "已合并：完成 {completed} 条，自评 {assessments} 条，"
                            "作答 {attempts} 条，笔记 {notes} 条",
                            "Merged: {completed} completed, {assessments} self-assessments, "
                            "{attempts} answers, {notes} notes").format(**counts))  # fmt: skip
            typer.echo(summary_text(store.summary(), chosen))

    @group.command("reset")
    @with_store
    def reset_command(
        ctx: typer.Context,
        opts: StoreOptions,
        yes: Annotated[
            bool, typer.Option("--yes", help="Really delete this profile's progress.")
        ] = False,
    ) -> None:
        """Delete everything saved for this profile (asks for --yes)."""
        chosen = opts.lang
        if not yes:
            fail(
                pick(
                    chosen,
                    "reset 会删除这个档案的进度：需要 --yes，但没有给出",
                    "reset deletes this profile's progress: expected --yes, found none",
                )
            )
        with opts.open() as store:
            store.reset()
            typer.echo(pick(chosen, f"已清空 {store.profile} 的进度：{store.where}",
                            f"reset: {store.profile}: {store.where}"))  # fmt: skip


def summary_text(summary: Summary, lang: str) -> str:
    """The progress bar line, the sections to review, and where ``attnlab quiz`` resumes
    (:meth:`~attnlab.progress.summary.Summary.next_section`, as the web's "continue")."""
    from attnlab.cli.quiz_session import progress_line, section_label
    from attnlab.content import knowledge

    lines = [progress_line(summary, lang)]
    if summary.attempts:
        n, ok = summary.attempts, summary.correct
        lines.append(
            pick(lang, f"练习：作答 {n} 次，答对 {ok} 次", f"Exercises: {n} answers, {ok} right")
        )
    if summary.to_review:
        marked = ", ".join(section_label(s, lang) for s in summary.to_review)
        lines.append(pick(lang, f"标记为需要复习：{marked}", f"Marked review again: {marked}"))
    nxt = summary.next_section()
    if nxt is None:
        lines.append(pick(lang, "全部 20 节都已完成。", "All 20 sections are done."))
    else:
        title = f"{section_label(nxt, lang)} · {knowledge.section(nxt, lang).title}"
        lines.append(pick(lang, f"接下来：{title}", f"Next: {title}"))
        lines.append(
            pick(lang, "运行 attnlab quiz 从这里继续", "Run attnlab quiz to continue there")
        )
    return "\n".join(lines)


def practice_line(store: ProgressStore, lang: str) -> str | None:
    """Each practised section's mastery (``attnlab practice``): ✓ once 3 dealt exercises were
    right in a row without the solution, else the current run; None before any practice."""
    from attnlab.grading import practice

    parts = [
        f"§{section} " + ("✓" if done else f"{run}/{practice.MASTERY}")
        for section, (run, done) in practice.mastery(store.attempts()).items()
    ]
    if not parts:
        return None
    n = practice.MASTERY
    head = pick(lang, f"练习（连续答对 {n} 组新数即掌握）：",
                f"Practice (mastered after {n} dealt exercises right in a row): ")  # fmt: skip
    return head + pick(lang, "，", ", ").join(parts)
