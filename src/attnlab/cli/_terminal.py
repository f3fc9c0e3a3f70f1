"""A terminal that cannot encode Chinese still gets readable output, never UnicodeEncodeError.

With ``PYTHONIOENCODING=ascii``, or ``LC_ALL=C`` with UTF-8 mode off, ``sys.stdout`` encodes
ASCII only and the first Chinese character of the lesson raised ``UnicodeEncodeError``.
:func:`make_streams_safe` wraps such a stream so every character it cannot encode is written as
its escape (``猫`` → ``\\u732b``), the way Python writes ``sys.stderr``.
"""

from __future__ import annotations

import io
import sys
from typing import TextIO

#: Characters the lesson prints: Chinese, the middle dot, arrows, check marks, infinity.
_PROBE = "注意力·→✓✗∞√"


class EscapingStream(io.TextIOBase):
    """A text stream over ``stream`` writing what its encoding lacks as backslash escapes.

    It has no ``buffer`` on purpose: click (under typer) swaps an ASCII stream for a UTF-8
    wrapper of its buffer, whose bytes an ASCII terminal shows as mojibake; without a buffer,
    click writes through this stream like everything else.
    """

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self._stream = stream

    # io.TextIOBase declares both as attributes; here they are read-only views of the stream.
    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._stream.encoding

    @property
    def errors(self) -> str:  # type: ignore[override]
        return "backslashreplace"

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        safe = text.encode(self.encoding, "backslashreplace").decode(self.encoding)
        self._stream.write(safe)
        return len(text)

    def writable(self) -> bool:
        return True

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()


def _encodes(stream: TextIO, text: str) -> bool:
    try:
        text.encode(stream.encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def make_streams_safe() -> None:
    """Wrap ``sys.stdout``/``sys.stderr`` in :class:`EscapingStream` when they cannot encode
    the lesson's text, and let ``sys.stdin`` replace bytes it cannot decode (a learner typing
    Chinese into an ASCII terminal gets ``�`` in the answer, not a traceback)."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None or isinstance(stream, EscapingStream) or _encodes(stream, _PROBE):
            continue
        setattr(sys, name, EscapingStream(stream))
    stdin = sys.stdin
    if stdin is None or _encodes(stdin, _PROBE) or getattr(stdin, "errors", None) == "replace":
        return
    if hasattr(stdin, "reconfigure"):
        stdin.reconfigure(errors="replace")
