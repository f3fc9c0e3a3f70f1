"""``attnlab audit FILE.py:NAME``: run the lesson's 10-point checklist on a learner's module."""

from __future__ import annotations

import contextlib
import json
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, cast

import typer

from attnlab.cli._common import LangOption, fail, lang_of

ORDER = 40
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Stopped(BaseException):
    """SIGINT or SIGTERM arrived while auditing (a BaseException: nothing may swallow it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signal = signal.Signals(signum)


@contextlib.contextmanager
def stopped_by_signals() -> Iterator[None]:
    """Turn the first SIGINT/SIGTERM into :class:`Stopped` (later ones are ignored, so the
    clean-up that ``run_audit`` does on the way out is not interrupted)."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set in the main thread
        return

    def stop(signum: int, _frame: object) -> None:
        for sig in STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
        raise Stopped(signum)

    previous = {sig: signal.signal(sig, stop) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _draw(result: dict[str, object], path: Path, lang: str) -> str:
    """Save the first differing stage of ``result`` as a PNG at ``path``; the line saying what
    was written, or why nothing was."""
    from attnlab.text import atomic
    from attnlab.text.i18n import pick

    stage = result.get("stage")
    if not isinstance(stage, dict):
        return pick(
            lang,
            f"没有画图 {path}：输出与参考一致，或没有找到不同的步骤",
            f"no figure written to {path}: the output equals the reference, or no differing "
            "stage was found",
        )
    from attnlab.figures.audit_stage import plot_stage

    fig = plot_stage(stage, lang)
    atomic.write_with(path, lambda f: fig.savefig(f, format="png", dpi=150), binary=True)
    return pick(lang, f"图已保存：{path}", f"figure written: {path}")


def register(app: typer.Typer) -> None:
    """Add the ``audit`` command to ``app``."""

    @app.command(
        "audit",
        help="Audit your attention class or factory FILE.py:NAME against the lesson's 10-point "
        "debugging checklist, in a sandboxed process. Exit 0 all pass, 1 a check failed, "
        "2 your code could not be run (raised, looped, exited, crashed, wrong signature) or "
        "could not be checked (its projections could not be read).",
    )
    def audit(
        ctx: typer.Context,
        target: Annotated[str, typer.Argument(help="FILE.py:NAME, e.g. my_head.py:AttentionHead")],
        kind: Annotated[
            str, typer.Option("--kind", help="head, multihead or auto (from the argument names)")
        ] = "auto",
        timeout: Annotated[
            float, typer.Option("--timeout", help="Seconds before giving up")
        ] = 20.0,
        init: Annotated[
            str | None,
            typer.Option(
                "--init",
                help='Constructor values the names do not tell, e.g. "d_model=C, h=H": C '
                "embedding size, H heads, D head size, T context length, or numbers",
            ),
        ] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON")] = False,
        figure: Annotated[
            Path | None,
            typer.Option(
                "--figure",
                help="Draw the first stage that differs from the reference, yours next to the "
                "reference's, to this PNG file",
            ),
        ] = None,
        lang: LangOption = None,
    ) -> None:
        from attnlab.audit import run_audit
        from attnlab.audit.report import render
        from attnlab.text.errors import InputError
        from attnlab.text.i18n import pick

        chosen = lang_of(ctx, lang)
        try:
            with stopped_by_signals():
                result = run_audit(target, kind=kind, timeout=timeout, init=init)
        except InputError as exc:
            fail(str(exc))
        except Stopped as stop:  # run_audit has killed every process it started by now
            name = stop.signal.name
            fail(
                pick(
                    chosen,
                    f"审计被 {name} 中断；它启动的进程都已结束，临时文件夹已删除",
                    f"audit stopped by {name}; every process it started was killed and its "
                    "temp folder removed",
                ),
                128 + stop.signal,
            )
        if as_json:
            typer.echo(json.dumps(result, ensure_ascii=False, indent=2))
        else:
            typer.echo(render(result, chosen), nl=False)
        if figure is not None:
            typer.echo(_draw(result, figure, chosen), err=as_json)
        raise typer.Exit(cast(int, result["exit_code"]))
