"""``attnlab class``: create a class, invite its learners, list classes, report where the class
goes wrong, and export/import a class (in the same progress file ``attnlab serve`` uses)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from attnlab.cli._common import fail
from attnlab.cli._store import StoreOptions, with_store
from attnlab.text.i18n import error_message, pick

if TYPE_CHECKING:
    from attnlab.progress.store import ProgressStore

ORDER = 83
T = TypeVar("T")

ClassOption = Annotated[str, typer.Option("--class", help="The class's id (attnlab class list).")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
FileArgument = Annotated[str, typer.Argument(metavar="FILE", help="The class file (JSON).")]


def _class_id(raw: str, lang: str) -> int:
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 9 or int(raw) == 0:
        shown = repr(raw[:20])
        fail(pick(lang, f"--class：应为班级编号（正整数，见 'attnlab class list'），实际是 {shown}",
                  f"--class: expected a class id (a positive integer, see 'attnlab class "
                  f"list'), found {shown}"))  # fmt: skip
    return int(raw)


def _names(file: str | None, count: int | None, learner: str | None, lang: str) -> list[str]:
    """The learners to invite: ``--learner``, the lines of ``--names``, else ``--count`` made-up
    names (``learner-01``...)."""
    if learner is not None:
        return [learner]
    if file is not None:
        try:
            lines = Path(file).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            fail(
                pick(
                    lang, f"{file}：无法读取名单（{exc}）", f"{file}: cannot read the names ({exc})"
                )
            )
        names = [line.strip() for line in lines if line.strip()]
        if not names or (count is not None and count != len(names)):
            n = len(names)
            fail(pick(lang, f"--names：应有 {count or '至少 1'} 个名字，实际有 {n} 个",
                      f"--names: expected {count or 'at least 1'} names, found {n}"))  # fmt: skip
        return names
    if count is None or not 1 <= count <= 10000:
        fail(pick(lang, f"--count：应为 1–10000 的整数，实际是 {count}",
                  f"--count: expected an integer 1-10000, found {count}"))  # fmt: skip
    return [f"learner-{i:0{len(str(count))}d}" for i in range(1, count + 1)]


def _run(opts: StoreOptions, call: Callable[[ProgressStore], T]) -> T:
    """``call(store)`` on the opened store; a wrong id or file is one line and exit 2."""
    with opts.open() as store:
        try:
            return call(store)
        except ValueError as exc:
            fail(error_message(exc, opts.lang))


def register(app: typer.Typer) -> None:
    """Add ``class`` with ``create``, ``invite``, ``list``, ``report``, ``export``, ``import``."""
    group = typer.Typer(help="Teach a class: create, invite, list, report, export, import.",
                        no_args_is_help=True)  # fmt: skip
    app.add_typer(group, name="class")

    @group.command("create")
    @with_store
    def create(ctx: typer.Context, name: str, as_json: JsonOption = False, *,
               opts: StoreOptions) -> None:  # fmt: skip
        """Create the class NAME and print its teacher key (once: only its hash is kept)."""
        made = _run(opts, lambda s: s.create_class(name))
        out = {"class": made.id, "teacher_key": made.teacher_key, "teacher_url": "/teacher"}
        if as_json:
            typer.echo(json.dumps(out, ensure_ascii=False))
            return
        cid = out["class"]
        typer.echo(pick(opts.lang, f"已创建班级 {cid}。教师密钥（只显示这一次）：",
                        f"Created class {cid}. Teacher key (shown only once):"))  # fmt: skip
        typer.echo(f"  {out['teacher_key']}")
        typer.echo(pick(opts.lang, "在 /teacher 输入它查看班级报告。",
                        "Enter it at /teacher to see the class report."))  # fmt: skip

    @group.command("invite")
    @with_store
    def invite(
        ctx: typer.Context,
        class_id: ClassOption,
        count: Annotated[int | None, typer.Option("--count", help="How many learners.")] = None,
        names: Annotated[
            str | None, typer.Option("--names", help="A file of names, one a line.")
        ] = None,
        learner: Annotated[
            str | None,
            typer.Option(
                "--learner",
                help="A new link for this learner (revokes their unused one, ends their sessions).",
            ),
        ] = None,
        as_json: JsonOption = False,
        *,
        opts: StoreOptions,
    ) -> None:
        """One invitation link per learner (/join/TOKEN, usable once)."""
        cid = _class_id(class_id, opts.lang)
        chosen = _names(names, count, learner, opts.lang)
        links = _run(opts, lambda s: s.invite(cid, chosen))
        rows = [{"learner": i.learner, "url": f"/join/{i.token}"} for i in links]
        if as_json:
            typer.echo(json.dumps({"invites": rows}, ensure_ascii=False))
            return
        for row in rows:
            typer.echo(f"{row['learner']}\t{row['url']}")

    @group.command("sign-out")
    @with_store
    def sign_out(
        ctx: typer.Context,
        class_id: ClassOption,
        learner: Annotated[str, typer.Option("--learner", help="The learner's name.")],
        *,
        opts: StoreOptions,
    ) -> None:
        """End a learner's sessions on every device (a lost phone, a shared computer); they
        join again with a new link (attnlab class invite --learner)."""
        cid = _class_id(class_id, opts.lang)
        ended = _run(opts, lambda s: s.sign_out(cid, learner))
        typer.echo(pick(opts.lang, f"{learner}：结束了 {ended} 个登录会话",
                        f"{learner}: {ended} session{'s' * (ended != 1)} ended"))  # fmt: skip

    @group.command("list")
    @with_store
    def list_classes(ctx: typer.Context, as_json: JsonOption = False, *,
                     opts: StoreOptions) -> None:  # fmt: skip
        """The classes of this store, with their number of learners."""
        found = _run(opts, lambda s: s.classes())
        if as_json:
            typer.echo(json.dumps({"classes": found}, ensure_ascii=False))
            return
        for c in found:
            typer.echo(pick(opts.lang, f"{c['class']}\t{c['name']}\t{c['learners']} 位学员",
                            f"{c['class']}\t{c['name']}\t{c['learners']} learners"))  # fmt: skip
        if not found:
            typer.echo(pick(opts.lang, "（还没有班级）", "(no classes yet)"))

    @group.command("report")
    @with_store
    def report(
        ctx: typer.Context,
        class_id: ClassOption,
        as_json: JsonOption = False,
        as_csv: Annotated[bool, typer.Option("--csv", help="Print CSV instead of text.")] = False,
        *,
        opts: StoreOptions,
    ) -> None:
        """Per learner, exercise and section: who did what, which mistakes, who is stuck."""
        from attnlab.grading import class_report

        cid = _class_id(class_id, opts.lang)
        data = _run(opts, lambda s: s.class_data(cid))
        built = class_report.build(data)
        if as_json:
            typer.echo(json.dumps(class_report.as_json(built), ensure_ascii=False))
        elif as_csv:
            typer.echo(class_report.as_csv(built), nl=False)
        else:
            typer.echo(class_report.text(built, opts.lang))

    @group.command("export")
    @with_store
    def export(ctx: typer.Context, class_id: ClassOption, file: FileArgument, *,
               opts: StoreOptions) -> None:  # fmt: skip
        """Write the class and every learner's progress, answers and notes to FILE."""
        from attnlab.progress.exchange_files import write_json_atomic

        cid = _class_id(class_id, opts.lang)

        def write(store: ProgressStore) -> None:
            try:
                write_json_atomic(file, store.export_class(cid), keep=store.own_files())
            except OSError as exc:
                why = exc.strerror or exc
                fail(pick(opts.lang, f"{file}：无法写入导出文件（{why}）",
                          f"{file}: cannot write the export ({why})"))  # fmt: skip

        _run(opts, write)
        typer.echo(pick(opts.lang, f"已导出班级 {cid}：{file}", f"Exported class {cid} to {file}"))

    @group.command("import")
    @with_store
    def import_(ctx: typer.Context, file: FileArgument, *, opts: StoreOptions) -> None:
        """Merge a class file written by 'attnlab class export' into this store."""
        from attnlab.progress.class_exchange import validate_class
        from attnlab.progress.exchange_files import read_export

        try:  # checked before the store is opened: a bad file never touches it
            data = read_export(file, "class")
            validate_class(data)
        except ValueError as exc:
            fail(error_message(exc, opts.lang))
        done = _run(opts, lambda s: s.import_class(data))
        cid, n = done["class"], done["learners"]
        typer.echo(pick(opts.lang, f"已导入班级 {cid}（{n} 位学员）",
                        f"Imported class {cid} ({n} learners)"))  # fmt: skip
