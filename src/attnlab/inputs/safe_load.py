"""Read a learner's JSON or TOML text without letting it exhaust memory, time or the stack.

Python's parsers trust their input: ``json.loads`` raises ``ValueError`` on an integer of more than
4300 digits and ``RecursionError`` on lists nested a thousand deep, ``tomllib`` the same, and a
64 MiB file of ``[],`` builds twenty million lists (two GiB, twenty seconds). Every learner file
(``--input``, ``check``'s answer files) and the explorer's JSON body are read here instead: the
size and the number of items are bounded before parsing, and every parser failure becomes one
:class:`~attnlab.text.errors.InputError` line saying what was expected and what was found.

Two rules hold for every file a learner gives attnlab, here and in ``progress import``
(:mod:`attnlab.progress.exchange_files`), which reads with :func:`utf8_text` and :func:`unique_keys`
too: a leading UTF-8 byte-order mark (Windows editors write one) is skipped, and a JSON object
that names a key twice is refused (``json.loads`` would keep the last value silently; TOML
refuses it itself).
"""

from __future__ import annotations

import codecs
import json
import tomllib
from decimal import Decimal
from pathlib import Path
from typing import Any

from attnlab.text.errors import InputError, Text, in_lang, input_error

MAX_FILE_BYTES = 64 * 1024 * 1024
#: Values, lists and tables a document may hold (counted as separators and brackets before
#: parsing). A million numbers, the most an input may hold, take about two million.
MAX_ITEMS = 3_000_000
#: Longer integer literals are read as floats (±inf, refused by the caller with the field named):
#: Python refuses to convert more than 4300 digits (and a float holds at most 309).
MAX_INT_DIGITS = 4000
SUFFIXES = (".json", ".toml")


class InvalidSyntax(InputError):
    """The text is not valid JSON or TOML at all (a web request answers 400, not 422)."""


class NotUtf8(ValueError):
    """Bytes that are not UTF-8: the first bad ``byte`` and its ``offset`` in the file."""

    def __init__(self, byte: int, offset: int) -> None:
        super().__init__(f"byte 0x{byte:02x} at offset {offset}")
        self.byte, self.offset = byte, offset


class DuplicateKey(ValueError):
    """A JSON object names ``key`` twice (raised by :func:`unique_keys` while parsing)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def utf8_text(raw: bytes) -> str:
    """``raw`` decoded as UTF-8, a leading byte-order mark skipped.

    Raises:
        NotUtf8: naming the first byte that is not UTF-8 and its offset in ``raw`` (the mark
            counted).
    """
    skip = len(codecs.BOM_UTF8) if raw.startswith(codecs.BOM_UTF8) else 0
    try:
        return str(memoryview(raw)[skip:], "utf-8")
    except UnicodeDecodeError as exc:
        raise NotUtf8(raw[skip + exc.start], skip + exc.start) from None


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads``'s ``object_pairs_hook``: the object as a dict; :class:`DuplicateKey` if a
    key appears twice."""
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise DuplicateKey(key)
        obj[key] = value
    return obj


def shown_key(key: str) -> str:
    """``key`` quoted for a message, cut to 40 characters."""
    return repr(key) if len(key) <= 40 else repr(key[:37]) + "..."


def _int(text: str) -> int | float:
    return int(text) if len(text) <= MAX_INT_DIGITS else float(text)


def _count_items(text: str, what: Text) -> None:
    items = sum(text.count(c) for c in ",[{\n")
    if items > MAX_ITEMS:
        raise input_error("items", what=what, limit=MAX_ITEMS, n=items)


def loads(text: str, suffix: str, what: Text, exact: bool = False) -> Any:
    """Parse ``text`` as JSON (``suffix=".json"``) or TOML, refusing with one line.

    Args:
        text: the document.
        suffix: ``".json"`` or ``".toml"``.
        what: how the message names the document (``"--input: mine.json"``).
        exact: read each non-integer number as a :class:`~decimal.Decimal`, which keeps the
            digits as written (``0.430`` stays three decimals; a float would be ``0.43``).

    Raises:
        InvalidSyntax: the text is not JSON (TOML) at all.
        InputError: more than :data:`MAX_ITEMS` items, nesting deeper than the
            parser can follow, an integer with more digits than Python converts, or a JSON
            object naming a key twice.
    """
    _count_items(text, what)
    floats: Any = Decimal if exact else float
    try:
        if suffix == ".json":
            return json.loads(
                text, parse_int=_int, parse_float=floats, object_pairs_hook=unique_keys
            )
        return tomllib.loads(text, parse_float=floats)
    except DuplicateKey as exc:
        raise input_error("dup_key", what=what, key=shown_key(exc.key)) from None
    except json.JSONDecodeError as exc:
        raise input_error(
            "json", InvalidSyntax, what=what, msg=exc.msg, line=exc.lineno, col=exc.colno
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise input_error("toml", InvalidSyntax, what=what, msg=str(exc)) from None
    except RecursionError:
        raise input_error("deep", what=what) from None
    except ValueError as exc:  # tomllib: an integer past Python's 4300-digit limit
        raise input_error("long_number", what=what, msg=str(exc)) from None


def read_text(
    path: Path, what: Text, suffixes: tuple[str, ...] = SUFFIXES, max_bytes: int = MAX_FILE_BYTES
) -> str:
    """The UTF-8 text of a regular file of at most ``max_bytes`` (see :func:`utf8_text`).

    At most ``max_bytes + 1`` bytes are read, so ``/dev/zero``, a named pipe or a file far
    larger than its kind needs is refused at once, before anything is parsed.
    """
    if not path.exists():
        raise input_error("no_file", what=what, path=path)
    if path.is_dir():
        raise input_error("is_dir", what=what, path=path)
    if not path.is_file():
        raise input_error("not_regular", what=what, path=path)
    if path.suffix.lower() not in suffixes:
        names = {"zh": " 或 ".join(suffixes), "en": " or ".join(suffixes)}
        raise input_error("suffix", what=what, names=names, name=path.name)
    try:
        with path.open("rb") as f:
            raw = f.read(max_bytes + 1)
    except OSError as exc:
        raise input_error("unreadable", what=what, path=path, why=exc.strerror) from None
    if len(raw) > max_bytes:
        raise input_error("too_large", what=what, path=path, mib=max_bytes / 2**20)
    try:
        return utf8_text(raw)
    except NotUtf8 as exc:
        raise input_error(
            "not_utf8", what=what, path=path, byte=exc.byte, offset=exc.offset
        ) from None


def load(path: Path, what: Text, max_bytes: int = MAX_FILE_BYTES, exact: bool = False) -> Any:
    """Read and parse a ``.json`` or ``.toml`` file of at most ``max_bytes`` (see
    :func:`read_text` and :func:`loads`, whose ``exact`` keeps numbers as written); ``what``
    names the file in messages (``"--input"``, or a text in both languages)."""
    text = read_text(path, what, max_bytes=max_bytes)
    named = {lang: f"{in_lang(what, lang)}: {path}" for lang in ("zh", "en")}
    return loads(text, path.suffix.lower(), named, exact)
