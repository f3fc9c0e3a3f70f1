"""Run ``python -m attnlab ARGS`` or ``python SCRIPT ARGS`` inside the test process, as that
process would have run it, for a fraction of a second instead of a fresh interpreter that
imports torch again.

What a child process would see is rebuilt for the length of one call: ``sys.argv`` (bytes
decoded as Python decodes a command line), ``__main__`` (through :mod:`runpy`, so click names
the program as ``python -m attnlab`` does), the environment, and standard streams over bytes
with the encoding and error handlers a child of this test run gets (read from one real child,
once per session). The exit code follows the interpreter's rules: ``sys.exit(None)`` is 0, a
non-integer is printed and gives 1, an escaping exception prints its traceback and gives 1.
Warnings are shown on stderr as the interpreter's default filters would show them.

Tests whose point is the process boundary itself (start-up imports, a terminal's encoding, file
rights dropped with ``setpriv``, peak memory, signals, the sandbox) still start real processes.
"""

from __future__ import annotations

import functools
import io
import json
import locale
import os
import runpy
import subprocess
import sys
import traceback
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

_PROBE = "import json, sys; print(json.dumps([[s.encoding, s.errors] for s in (sys.stdin, sys.stdout, sys.stderr)]))"  # noqa: E501


@functools.cache
def child_streams() -> list[list[str]]:
    """(encoding, errors) of a child's stdin, stdout and stderr, all three pipes."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], input=b"", capture_output=True, check=True, timeout=60
    )
    return json.loads(done.stdout)


class _Kept(io.BytesIO):
    """Bytes that outlive ``close()`` (a program may close its stderr, as on a broken pipe)."""

    def close(self) -> None:
        pass


@contextmanager
def _environment(env: Mapping[str, str] | None) -> Iterator[None]:
    before = dict(os.environ)
    os.environ.update(env or {})
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(before)


def _show_warnings_as_a_fresh_interpreter() -> None:
    """The interpreter's default warning filters (no ``-W`` options), shown on ``sys.stderr``."""
    warnings.resetwarnings()
    warnings.simplefilter("default")
    warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")
    for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning,
                     ResourceWarning):  # fmt: skip
        warnings.filterwarnings("ignore", category=category, append=True)
    warnings.showwarning = _show_on_stderr


def _show_on_stderr(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                    file: Any = None, line: str | None = None) -> None:  # fmt: skip
    text = warnings.formatwarning(message, category, filename, lineno, line)
    (file or sys.stderr).write(text)


def _exit_code(exc: SystemExit, stderr: io.TextIOBase) -> int:
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=stderr)
    return 1


def _run(main: Callable[[], object], argv: Sequence[str | bytes], stdin: bytes,
         env: Mapping[str, str] | None) -> tuple[int, bytes, bytes]:  # fmt: skip
    (in_enc, in_err), (out_enc, out_err), (err_enc, err_err) = child_streams()
    out, err = _Kept(), _Kept()
    streams = (
        io.TextIOWrapper(io.BytesIO(stdin), encoding=in_enc, errors=in_err),
        io.TextIOWrapper(out, encoding=out_enc, errors=out_err),
        io.TextIOWrapper(err, encoding=err_enc, errors=err_err, line_buffering=True),
    )
    saved = sys.stdin, sys.stdout, sys.stderr, sys.argv
    sys.stdin, sys.stdout, sys.stderr = streams
    sys.argv = ["", *(os.fsdecode(arg) for arg in argv)]  # runpy sets argv[0]
    try:
        with _environment(env), warnings.catch_warnings():
            _show_warnings_as_a_fresh_interpreter()
            try:
                main()
                code = 0
            except SystemExit as exc:
                code = _exit_code(exc, sys.stderr)
            except BaseException:  # what the interpreter prints for an uncaught exception
                traceback.print_exc(file=sys.stderr)
                code = 1
            for stream in (sys.stdout, sys.stderr):
                if not stream.closed:
                    stream.flush()
    finally:
        sys.stdin, sys.stdout, sys.stderr, sys.argv = saved
    return code, out.getvalue(), err.getvalue()


def _completed(args: list[Any], code: int, out: bytes, err: bytes,
               text: bool) -> subprocess.CompletedProcess[Any]:  # fmt: skip
    if not text:
        return subprocess.CompletedProcess(args, code, out, err)

    def decode(data: bytes) -> str:  # as subprocess.run(text=True) decodes a child's output
        text = data.decode(locale.getpreferredencoding(False))
        return text.replace("\r\n", "\n").replace("\r", "\n")

    return subprocess.CompletedProcess(args, code, decode(out), decode(err))


def attnlab(*argv: str | bytes, stdin: bytes | str = b"", env: Mapping[str, str] | None = None,
            text: bool = False) -> subprocess.CompletedProcess[Any]:  # fmt: skip
    """``python -m attnlab ARGV`` with ``stdin``, ``os.environ`` updated by ``env``; returns what
    ``subprocess.run(..., capture_output=True, text=text)`` would."""
    data = stdin.encode() if isinstance(stdin, str) else stdin

    def main() -> None:
        runpy.run_module("attnlab", run_name="__main__", alter_sys=True)

    code, out, err = _run(main, argv, data, env)
    return _completed([sys.executable, "-m", "attnlab", *argv], code, out, err, text)


def script(path: Path, *argv: str, stdin: bytes = b"", env: Mapping[str, str] | None = None,
           text: bool = True) -> subprocess.CompletedProcess[Any]:  # fmt: skip
    """``python PATH ARGV``: the file runs as ``__main__``, as its learner runs it."""

    def main() -> None:
        runpy.run_path(str(path), run_name="__main__")

    code, out, err = _run(main, argv, stdin, env)
    return _completed([sys.executable, str(path), *argv], code, out, err, text)
