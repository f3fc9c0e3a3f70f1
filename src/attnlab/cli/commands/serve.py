"""``attnlab serve``: the web lesson on a local port (FastAPI + uvicorn, loaded only here)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from attnlab.cli._common import fail
from attnlab.cli._store import StoreOptions, with_store

ORDER = 80
LOOPBACK = "127.0.0.1"
DEFAULT_PORT = 8707

HostOption = Annotated[
    str, typer.Option("--host", help="Address to bind. Keep 127.0.0.1 unless you mean to share it.")
]
PortOption = Annotated[int, typer.Option("--port", min=0, max=65535, help="Port.")]
OpenOption = Annotated[bool, typer.Option("--open", help="Open the lesson in your web browser.")]
AllowAuditOption = Annotated[
    bool,
    typer.Option(
        "--allow-audit",
        help='Turn on "Check my code" (sections 13 and 15: learners\' code through the sandboxed '
        "auditor) on a non-loopback --host; it stays off where bubblewrap cannot isolate the "
        "code. On 127.0.0.1, localhost or ::1 it is always on.",
    ),
]
WorkersOption = Annotated[
    int | None,
    typer.Option(
        "--workers",
        min=1,
        max=64,
        help="Worker processes answering requests (default: one per CPU core this process may "
        "use). They share the progress store, so any of them can answer any learner.",
    ),
]


def default_workers() -> int:
    """One worker per CPU core this process may run on."""
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


ClassOnlyOption = Annotated[
    bool,
    typer.Option(
        "--class-only",
        help="Serve class learners only (attnlab class invite): a visitor without a session "
        "from their invitation link is asked for it instead of seeing this profile's progress.",
    ),
]


def register(app: typer.Typer) -> None:
    """Add ``serve`` to ``app``."""

    @app.command("serve")
    @with_store
    def serve_command(
        ctx: typer.Context,
        opts: StoreOptions,
        host: HostOption = LOOPBACK,
        port: PortOption = DEFAULT_PORT,
        open_browser: OpenOption = False,
        allow_audit: AllowAuditOption = False,
        workers: WorkersOption = None,
        class_only: ClassOnlyOption = False,
    ) -> None:
        """Serve the web lesson: 20 sections with live numbers, the explorer, checks, progress."""
        _serve(host, port, open_browser, opts, allow_audit, workers or default_workers(),
               class_only=class_only)  # fmt: skip


def _serve(
    host: str,
    port: int,
    open_browser: bool,
    opts: StoreOptions,
    allow_audit: bool = False,
    workers: int = 1,
    *,
    class_only: bool = False,
) -> None:
    import os
    import secrets
    import socket
    import threading
    import webbrowser

    import uvicorn

    from attnlab.progress.store import ProgressStore, StoreError, StoreReadOnly
    from attnlab.text.i18n import error_message
    from attnlab.web.routes_audit import gate
    from attnlab.web.security import allowed_hosts

    data_dir, profile, lang = opts.data_dir, opts.profile, opts.lang
    try:  # refuse a broken progress file now, with its path, rather than on the first page
        with ProgressStore.open(data_dir, profile, opts.db) as store:
            store.check_writable()
    except StoreReadOnly as exc:  # the pages still show it; saving answers is refused (409)
        typer.echo(f"warning: {exc.text(lang)}")
    except StoreError as exc:
        fail(exc.text(lang))
    except (ValueError, OSError) as exc:
        fail(error_message(exc, lang))
    try:
        with socket.create_server((host, port)) as probe:
            port = probe.getsockname()[1]  # --port 0 picks a free one
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
    audit_off = gate(host, allow_audit)
    settings: dict[str, Any] = {"data_dir": str(data_dir) if data_dir else None, "profile": profile,
                "lang": lang, "hosts": allowed_hosts(host), "audit_off": audit_off,
                "db": opts.db, "class_only": class_only}  # fmt: skip
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else shown}:{port}/lesson"
    typer.echo(f"attnlab web lesson: {url}  (Ctrl+C to stop)")
    if host not in ("127.0.0.1", "localhost", "::1"):
        typer.echo(f"warning: listening on {host}: other machines on the network can reach it")
        if audit_off == "sandbox":
            typer.echo("warning: --allow-audit ignored: this machine cannot isolate learner code")
    if open_browser:
        threading.Timer(1.0, webbrowser.open, args=(url,)).start()
    quiet: dict[str, Any] = {
        "host": host,
        "port": port,
        "log_level": "warning",
        "access_log": False,
    }
    from attnlab.web.worker import app_from_env, build_app, config_env

    if workers == 1:  # this process serves: every section and figure ready before listening
        uvicorn.run(build_app(settings), **quiet)
        return

    meet = secrets.token_hex(8)  # the name the first workers meet under before they serve
    os.environ.update(config_env(meet, workers, **settings))  # read by every (spawned) worker
    target = f"{app_from_env.__module__}:{app_from_env.__name__}"
    uvicorn.run(target, factory=True, workers=workers, **quiet)
