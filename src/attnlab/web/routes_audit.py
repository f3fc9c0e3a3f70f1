""" "Check my code" on sections 13 and 15: the learner's file through the same sandboxed auditor
as ``attnlab audit``, its report shown on the section's page.

The code is written to a fresh private temporary folder, audited by
:func:`attnlab.audit.run_audit` (the CLI's limits: 20 s, the memory cap), and the folder is
removed; the report is rendered in the page's language and not stored. Who asks is checked
first (the CSRF token, then the learner's session on a server for class learners only); one
check runs at a time per server, across its worker processes (:func:`audit_slot`); a second one
is refused with 503 while it runs.

Whether the box is on is decided once, by :func:`gate`: on for a server bound to a loopback
address, off on any other unless ``attnlab serve --allow-audit`` was given and the auditor can
isolate learner code (:func:`attnlab.audit.sandbox.isolation`).
"""

from __future__ import annotations

import contextlib
import keyword
import os
import re
import socket
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from attnlab.text import atomic
from attnlab.text.errors import InputError
from attnlab.web.common import AUDIT_SECTIONS, audit_view, csrf_protect, lang_of, settings
from attnlab.web.routes_pages import _section_id, section_page
from attnlab.web.security import RequestRefused, refused
from attnlab.web.ui_text import UI

router = APIRouter()
#: Largest file accepted, in bytes (UTF-8).
MAX_CODE_BYTES = 200 * 1024
#: Largest request body of the form: a pasted file and a chosen one, with room for the rest.
AUDIT_BODY_BYTES = 2 * MAX_CODE_BYTES + 64 * 1024
#: The form's path (the body limit lets it send :data:`AUDIT_BODY_BYTES`).
AUDIT_PATH = re.compile(r"/section/[^/]+/audit")
MAX_NAME = 100
MAX_INIT = 300
KINDS = ("auto", "head", "multihead")  # as attnlab.audit.KINDS, without importing the auditor
LOOPBACK = ("127.0.0.1", "localhost", "::1")
#: One audit at a time in this process: each one runs two Python processes and torch.
AUDIT_LOCK = threading.Lock()
#: And one at a time per server across its worker processes: the holder binds this Linux
#: abstract socket name (no file behind it; the kernel frees it when the holder dies).
AUDIT_SLOT = "attnlab-audit-{server}"
FILE_NAME = "my_code.py"
_VERDICT = {0: ("audit_pass", "ok"), 1: ("audit_fail", "bad")}


def gate(host: str, allow: bool) -> str | None:
    """Why "Check my code" is off for a server bound to ``host`` (``"shared"``: not loopback
    and no ``--allow-audit``; ``"sandbox"``: learner code cannot be isolated here), or ``None``
    when it is on."""
    if host in LOOPBACK:
        return None
    if not allow:
        return "shared"
    from attnlab.audit.sandbox import isolation

    return None if isolation() is None else "sandbox"


def _field(form: Any, key: str) -> str:
    value = form.get(key)
    return value if isinstance(value, str) else ""


async def _code(form: Any) -> str:
    """The pasted or chosen file's text: exactly one of them, UTF-8, at most 200 KB."""
    pasted = _field(form, "code")
    upload = form.get("file")
    raw = b""
    if isinstance(upload, UploadFile) and upload.filename:
        if not upload.filename.endswith(".py"):
            raise refused(422, "audit_bad_file", found=upload.filename[:60])
        raw = await upload.read(MAX_CODE_BYTES + 1)
    if raw and pasted.strip():
        raise refused(422, "audit_both")
    if not raw:
        raw = pasted.encode("utf-8", "surrogatepass")
    if len(raw) > MAX_CODE_BYTES:
        n = f"{len(raw)}+" if len(raw) == MAX_CODE_BYTES + 1 else len(raw)
        raise refused(422, "audit_too_big", limit=MAX_CODE_BYTES, n=n)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        byte = f"0x{raw[exc.start]:02x}"
        raise refused(422, "audit_not_utf8", pos=exc.start + 1, byte=byte) from None
    if not text.strip():
        raise refused(422, "audit_no_code")
    return text


def _checked(form: Any) -> dict[str, str]:
    """The name, kind and init fields, refused with one line when malformed."""
    name, kind, init = (_field(form, k).strip() for k in ("name", "kind", "init"))
    kind = kind or "auto"
    if not name.isidentifier() or keyword.iskeyword(name) or len(name) > MAX_NAME:
        raise refused(422, "audit_bad_name", found=name[:40])
    if kind not in KINDS:
        raise refused(422, "audit_bad_kind", options=", ".join(KINDS), found=kind[:20])
    if len(init) > MAX_INIT:
        raise refused(422, "audit_long_init", limit=MAX_INIT, n=len(init))
    return {"name": name, "kind": kind, "init": init}


def _server() -> str:
    """This server's name: the one ``attnlab serve --workers N`` gives all its workers, else
    this process's own (a server of one process)."""
    from attnlab.web.worker import START_ENV

    return os.environ.get(START_ENV, "").rpartition(":")[0] or f"pid{os.getpid()}"


@contextlib.contextmanager
def audit_slot() -> Iterator[bool]:
    """Whether this request holds the server's one audit slot (held until the block ends):
    :data:`AUDIT_LOCK` in this process and, on Linux, :data:`AUDIT_SLOT` across the server's
    workers."""
    if not AUDIT_LOCK.acquire(blocking=False):
        yield False
        return
    try:
        if not sys.platform.startswith("linux"):
            yield True
            return
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as held:
            try:
                held.bind("\0" + AUDIT_SLOT.format(server=_server()))
            except OSError:  # another worker of this server holds it
                yield False
                return
            yield True
    finally:
        AUDIT_LOCK.release()


def _audit(code: str, name: str, kind: str, init: str) -> dict[str, Any]:
    """Run the auditor on ``code`` written to a private temporary folder, removed afterwards."""
    from attnlab.audit import run_audit

    with tempfile.TemporaryDirectory(prefix="attnlab-web-audit-") as folder:
        path = Path(folder) / FILE_NAME
        atomic.write_with(path, lambda f: f.write(code.encode("utf-8")), binary=True)
        try:
            return run_audit(
                f"{path}:{name}", kind=kind, init=init or None, shown=f"{FILE_NAME}:{name}"
            )
        except InputError as exc:  # a malformed init: nothing was run
            raise RequestRefused(422, exc.localized("en"), exc.localized("zh")) from None


@router.post("/section/{section_id}/audit", dependencies=[Depends(csrf_protect)])
async def check_my_code(request: Request, section_id: str) -> HTMLResponse:
    """Audit the posted file and show its report on the section's page (200, not stored)."""
    lang = lang_of(request)
    sid = _section_id(section_id, lang)
    if sid not in AUDIT_SECTIONS:
        known = ", ".join(str(s) for s in AUDIT_SECTIONS)
        raise refused(404, "audit_no_section", found=sid, known=known)
    off = settings(request).audit_off
    if off:
        raise refused(403, f"audit_off_{off}")
    # Who asks, before anything runs (the CSRF token was checked first): a server for class
    # learners only refuses a visitor without a session (401) or with an ended one (403).
    await run_in_threadpool(settings(request).store)
    form = await request.form()  # already read by csrf_protect when the token is a field
    code = await _code(form)
    fields = _checked(form)
    with audit_slot() as mine:
        if not mine:
            raise refused(503, "audit_busy")
        result = await run_in_threadpool(_audit, code, **fields)
    from attnlab.audit.report import render

    exit_code = int(result.get("exit_code", 2))
    key, style = _VERDICT.get(exit_code, ("audit_undecided", "hint"))
    shown = {
        "section": sid,
        "report": render(result, lang),
        "verdict": UI[lang][key],
        "style": style,
        "exit_code": exit_code,
    }
    view = audit_view(request, lang, form={"code": _field(form, "code"), **fields}, result=shown)
    return await run_in_threadpool(section_page, request, sid, lang, None, view)  # the store
