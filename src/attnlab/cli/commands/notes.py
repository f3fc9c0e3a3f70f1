"""``attnlab notes`` (list, add, rm) and ``attnlab bookmark``: the learner's notes and bookmarks,
in the same progress file as the web lesson's note boxes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from attnlab.cli._common import fail
from attnlab.cli._store import StoreOptions, keep_for_subcommands, with_store
from attnlab.inputs.text_limits import KINDS
from attnlab.text.fmt import one_line
from attnlab.text.i18n import error_message, pick

if TYPE_CHECKING:
    from attnlab.progress.store import ProgressStore

ORDER = 82

SectionArgument = Annotated[
    str, typer.Argument(metavar="SECTION", help="Section number, 0-19 (0 = core goal).")
]
NoteArgument = Annotated[str, typer.Argument(help=f"The note (1-{KINDS['note'].most} characters).")]
NoteIdArgument = Annotated[str, typer.Argument(metavar="ID", help="The note's id (or its start).")]


def _section(raw: str, lang: str) -> int:
    from attnlab.content.sections import parse_section_id

    try:
        return parse_section_id(raw)
    except ValueError:
        shown = repr(raw[:20])
        fail(pick(lang, f"节号应为 0–19 的整数（0 = 核心目标），收到的是 {shown}",
                  f"section: expected an integer 0-19 (0 = core goal), found {shown}"))  # fmt: skip


def listing(store: ProgressStore, lang: str) -> str:
    """The notes by section (short id, text) and the bookmarked sections."""
    from attnlab.content.knowledge import section
    from attnlab.content.sections import label

    def title(s: int) -> str:
        return f"{label(s, lang)} {section(s, lang).title}"

    notes, marks = store.notes(), store.bookmarks()
    lines = [pick(lang, f"书签（{len(marks)}）：", f"Bookmarks ({len(marks)}):")]
    lines += [f"  ★ {title(s)}" for s in marks] or [pick(lang, "  （无）", "  (none)")]
    lines.append(pick(lang, f"笔记（{len(notes)}）：", f"Notes ({len(notes)}):"))
    shown = None
    for n in notes:
        if n.section != shown:
            lines.append(f"  {title(n.section)}")
            shown = n.section
        lines.append(f"    [{n.short_id}] " + one_line(n.text))
    if not notes:
        lines.append(pick(lang, "  （无）", "  (none)"))
    return "\n".join(lines)


def register(app: typer.Typer) -> None:
    """Add ``notes`` (with ``add`` and ``rm``) and ``bookmark`` to ``app``."""
    group = typer.Typer(help="Your notes and bookmarks: list, add, rm.", no_args_is_help=False)
    app.add_typer(group, name="notes")

    @group.callback(invoke_without_command=True)
    @with_store
    def notes_list(ctx: typer.Context, opts: StoreOptions) -> None:
        """List your notes (by section, with their ids) and bookmarked sections."""
        keep_for_subcommands(ctx, opts)
        if ctx.invoked_subcommand is None:
            with opts.open() as store:
                typer.echo(listing(store, opts.lang))

    @group.command("add")
    @with_store
    def notes_add(
        ctx: typer.Context, section: SectionArgument, text: NoteArgument, opts: StoreOptions
    ) -> None:
        """Add a note to SECTION."""
        from attnlab.inputs.text_limits import check_text

        sid = _section(section, opts.lang)
        try:  # checked before the store is opened: a bad note never touches the file
            check_text(text, "note")
        except ValueError as exc:
            fail(error_message(exc, opts.lang))
        with opts.open() as store:
            note = store.add_note(sid, text)
        typer.echo(pick(opts.lang, f"已添加笔记 [{note.short_id}] 到第 {sid} 节",
                        f"Added note [{note.short_id}] to section {sid}"))  # fmt: skip

    @group.command("rm")
    @with_store
    def notes_rm(ctx: typer.Context, note_id: NoteIdArgument, opts: StoreOptions) -> None:
        """Delete the note ID (the id `attnlab notes` shows, at least 4 characters)."""
        with opts.open() as store:
            try:
                note = store.delete_note(note_id)
            except ValueError as exc:
                fail(error_message(exc, opts.lang))
        typer.echo(pick(opts.lang, f"已删除笔记 [{note.short_id}]（第 {note.section} 节）",
                        f"Deleted note [{note.short_id}] (section {note.section})"))  # fmt: skip

    @app.command("bookmark")
    @with_store
    def bookmark(ctx: typer.Context, section: SectionArgument, opts: StoreOptions) -> None:
        """Bookmark SECTION, or remove its bookmark if it has one."""
        sid = _section(section, opts.lang)
        with opts.open() as store:
            marked = store.toggle_bookmark(sid)
        zh, en = ("已加书签", "bookmarked") if marked else ("已取消书签", "bookmark removed")
        typer.echo(pick(opts.lang, f"第 {sid} 节：{zh}", f"Section {sid}: {en}"))
