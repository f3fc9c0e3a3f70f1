"""``attnlab notes`` (list, add, rm) and ``attnlab bookmark``: the learner's notes and bookmarks,
in the same progress file as the web lesson's note boxes."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Annotated

import typer

from attnlab.cli._common import LangOption, fail, lang_of
from attnlab.cli._store import DataDirOption, ProfileOption, open_store
from attnlab.inputs.text_limits import KINDS
from attnlab.text.fmt import one_line
from attnlab.text.i18n import error_message, pick

if TYPE_CHECKING:
    from attnlab.progress.store import ProgressStore

ORDER = 82

SectionArgument = Annotated[
    str, typer.Argument(metavar="SECTION", help="Section number, 0-19 (0 = core goal).")
]


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
    def notes_list(
        ctx: typer.Context,
        data_dir: DataDirOption = None,
        profile: ProfileOption = None,
        lang: LangOption = None,
    ) -> None:
        """List your notes (by section, with their ids) and bookmarked sections."""
        ctx.obj = {**(ctx.obj or {}), "data_dir": data_dir, "profile": profile}
        if ctx.invoked_subcommand is None:
            chosen = lang_of(ctx, lang)
            with open_store(data_dir, profile, chosen) as store:
                typer.echo(listing(store, chosen))

    @group.command("add")
    def notes_add(
        ctx: typer.Context,
        section: SectionArgument,
        text: Annotated[str, typer.Argument(help=f"The note (1-{KINDS['note'].most} characters).")],
        data_dir: DataDirOption = None,
        profile: ProfileOption = None,
        lang: LangOption = None,
    ) -> None:
        """Add a note to SECTION."""
        from attnlab.inputs.text_limits import check_text

        chosen = lang_of(ctx, lang)
        sid = _section(section, chosen)
        try:  # checked before the store is opened: a bad note never touches the file
            check_text(text, "note")
        except ValueError as exc:
            fail(error_message(exc, chosen))
        with _store(ctx, data_dir, profile, chosen) as store:
            note = store.add_note(sid, text)
        typer.echo(pick(chosen, f"已添加笔记 [{note.short_id}] 到第 {sid} 节",
                        f"Added note [{note.short_id}] to section {sid}"))  # fmt: skip

    @group.command("rm")
    def notes_rm(
        ctx: typer.Context,
        note_id: Annotated[str, typer.Argument(metavar="ID", help="The note's id (or its start).")],
        data_dir: DataDirOption = None,
        profile: ProfileOption = None,
        lang: LangOption = None,
    ) -> None:
        """Delete the note ID (the id `attnlab notes` shows, at least 4 characters)."""
        chosen = lang_of(ctx, lang)
        with _store(ctx, data_dir, profile, chosen) as store:
            try:
                note = store.delete_note(note_id)
            except ValueError as exc:
                fail(error_message(exc, chosen))
        typer.echo(pick(chosen, f"已删除笔记 [{note.short_id}]（第 {note.section} 节）",
                        f"Deleted note [{note.short_id}] (section {note.section})"))  # fmt: skip

    @app.command("bookmark")
    def bookmark(
        ctx: typer.Context,
        section: SectionArgument,
        data_dir: DataDirOption = None,
        profile: ProfileOption = None,
        lang: LangOption = None,
    ) -> None:
        """Bookmark SECTION, or remove its bookmark if it has one."""
        chosen = lang_of(ctx, lang)
        sid = _section(section, chosen)
        with open_store(data_dir, profile, chosen) as store:
            marked = store.toggle_bookmark(sid)
        zh, en = ("已加书签", "bookmarked") if marked else ("已取消书签", "bookmark removed")
        typer.echo(pick(chosen, f"第 {sid} 节：{zh}", f"Section {sid}: {en}"))


def _store(
    ctx: typer.Context, data_dir: str | None, profile: str | None, lang: str
) -> AbstractContextManager[ProgressStore]:
    parent = ctx.obj or {}
    return open_store(data_dir or parent.get("data_dir"), profile or parent.get("profile"), lang)
