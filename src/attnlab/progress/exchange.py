"""What the progress store keeps, and its export format.

The rules every row follows before it is written, by the store or by an import (a profile's
name, a section, an attempt: :func:`check_attempt`), the time every row carries
(:func:`utc_now`), and the export format: build it, validate it and merge it (files:
:mod:`attnlab.progress.exchange_files`).

An export holds one profile's progress::

    {"format": "attnlab-progress", "version": 2, "profile": "default",
     "exported_at": "2026-11-29T18:00:00.000000+00:00",
     "completed":   [{"section": 4, "at": "..."}],
     "assessments": [{"section": 4, "status": "review", "at": "..."}],
     "attempts":    [{"exercise": "4c", "answer": "0.40", "correct": true,
                      "diagnosis": null, "at": "..."}],
     "last_section": {"section": 5, "at": "..."},
     "notes":       [{"id": "<uuid4>", "section": 5, "text": "...", "created": "...",
                      "at": "...", "deleted": false}],
     "bookmarks":   [{"section": 5, "marked": true, "at": "..."}]}

Version 1 files (before notes and bookmarks) are still read. A deleted note or a removed
bookmark stays as an entry with its time, so merging an older file never brings it back.

A file that breaks any rule is refused as a whole with one line naming the field, what was
expected and what was found; nothing is merged from it.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

from attnlab.core.example import SECTION_COUNT
from attnlab.inputs.text_limits import check_text
from attnlab.progress.backend import Connection
from attnlab.progress.store_errors import EXPECTED, file_error
from attnlab.text.errors import InputError, filled

FORMAT = "attnlab-progress"
FORMAT_VERSION = 2
ASSESSMENTS: tuple[str, ...] = ("understood", "review")
_TOP_KEYS_V1 = {"format", "version", "profile", "exported_at", "completed", "assessments",
                "attempts", "last_section"}  # fmt: skip
_TOP_KEYS = _TOP_KEYS_V1 | {"notes", "bookmarks"}
_SECTION = "section"  # an EXPECTED key


def utc_now() -> str:
    """The current time as ISO 8601 UTC with microseconds (sorts as text): every time the
    store keeps, and every time of an export once read (:func:`validate_export`)."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


def check_profile(name: object) -> str:
    """``name`` if it is a profile name (:data:`~attnlab.inputs.text_limits.KINDS`
    ``"profile"``), else :class:`~attnlab.inputs.text_limits.TextError` (a ``ValueError``)."""
    return check_text(name, "profile")


def check_section(section: object) -> int:
    """``section`` if it is a section id 0-19, else ``ValueError``."""
    if (
        isinstance(section, bool)
        or not isinstance(section, int)
        or not 0 <= section < SECTION_COUNT
    ):
        raise ValueError(
            f"section must be an integer 0-{SECTION_COUNT - 1} (0 = core goal), got {section!r}"
        )
    return section


class NoteError(ValueError):
    """A note that cannot be saved or found: ``str()`` is English, :meth:`localized` picks."""

    def __init__(self, en: str, zh: str) -> None:
        super().__init__(en)
        self.en, self.zh = en, zh

    def localized(self, lang: str) -> str:
        """The message in ``lang`` ("zh" or "en")."""
        return self.zh if lang == "zh" else self.en


def answer_kind(exercise: str) -> str:
    """The kind of text an answer to ``exercise`` is: ``check_answer`` for a knowledge check
    (``check-N``), ``exercise_answer`` for a graded exercise."""
    return "check_answer" if exercise.startswith("check-") else "exercise_answer"


def check_exercise(exercise: object) -> str:
    """``exercise`` if it has the shape of an answer's id, else ``ValueError``.

    The shape is ``check-N`` (the knowledge check of section N), ``Nx`` (a graded exercise of
    section N: the section's number and one letter) or ``practice-N`` (an exercise dealt for
    section N by ``attnlab practice``; the verdict data holds its seed). Whether such an
    exercise exists is the answer service's question (:func:`attnlab.grading.answers.submit`);
    the store keeps what it is given in this shape and knows nothing of the lesson's content.
    """
    match = _EXERCISE.fullmatch(exercise) if isinstance(exercise, str) else None
    if match is None or int(next(g for g in match.groups() if g is not None)) >= SECTION_COUNT:
        raise ValueError(f"exercise must be an id such as '4a' or 'check-4', got {exercise!r}")
    return str(exercise)


_EXERCISE = re.compile(r"check-(0|[1-9][0-9]?)|(0|[1-9][0-9]?)[a-z]|practice-(0|[1-9][0-9]?)")


def attempt_dict(
    exercise: str, answer: str, correct: int | None, diagnosis: str | None, at: str
) -> dict[str, Any]:
    """One attempt as it appears in an export."""
    flag = None if correct is None else bool(correct)
    return {"exercise": exercise, "answer": answer, "correct": flag, "diagnosis": diagnosis,
            "at": at}  # fmt: skip


def build_export(
    profile: str,
    now: str,
    completed: list[tuple[Any, ...]],
    assessments: list[tuple[Any, ...]],
    attempts: list[dict[str, Any]],
    visit: list[tuple[Any, ...]],
    notes: list[tuple[Any, ...]],
    bookmarks: list[tuple[Any, ...]],
) -> dict[str, Any]:
    """The export dictionary from the store's rows."""
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "profile": profile,
        "exported_at": now,
        "completed": [{"section": s, "at": at} for s, at in sorted(completed)],
        "assessments": [
            {"section": s, "status": st, "at": at} for s, st, at in sorted(assessments)
        ],
        "attempts": attempts,
        "last_section": {"section": visit[0][0], "at": visit[0][1]} if visit else None,
        "notes": [
            {"id": i, "section": s, "text": t, "created": c, "at": at, "deleted": bool(d)}
            for i, s, t, c, at, d in sorted(notes, key=lambda n: (n[3], n[0]))
        ],
        "bookmarks": [
            {"section": s, "marked": bool(m), "at": at} for s, m, at in sorted(bookmarks)
        ],
    }


def _fail(field: str, expected: str, found: object, **fields: object) -> InputError:
    """``field: expected ..., found ...`` in both languages; ``expected`` is an
    :data:`~attnlab.progress.store_errors.EXPECTED` key, filled with ``fields``."""
    shown = repr(found)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    return file_error("field", field=field, expected=filled(EXPECTED, expected, **fields),
                      found=shown)  # fmt: skip


def _time(value: object, field: str) -> str:
    if not isinstance(value, str):
        raise _fail(field, "time", value)
    try:
        parsed = datetime.fromisoformat(value)
        if parsed.tzinfo is None:
            raise ValueError("no UTC offset")
        return parsed.astimezone(UTC).isoformat(timespec="microseconds")
    except (ValueError, OverflowError):  # 0001-01-01T00:00+01:00 is before year 1 in UTC
        raise _fail(field, "time", value) from None


def _entry(item: object, field: str, keys: set[str]) -> dict[str, Any]:
    if not isinstance(item, dict) or set(item) != keys:
        raise _fail(field, "keys", item, keys=", ".join(sorted(keys)))
    return item


def _checked(check: Any, value: object, field: str, expected: str) -> Any:
    try:
        return check(value)
    except ValueError:
        raise _fail(field, expected, value, last=SECTION_COUNT - 1) from None


def _is_int(value: object, expected: int) -> bool:
    return type(value) is int and value == expected


def _list(data: dict[str, Any], key: str) -> list[Any]:
    value = data[key]
    if not isinstance(value, list):
        raise _fail(key, "list", value)
    return value


def validate_export(data: object) -> dict[str, Any]:
    """Check every field of an export; return it with times normalised to UTC.

    Raises:
        InputError: one line naming the first bad field, what was expected and what was found.
    """
    if not isinstance(data, dict):
        raise _fail("progress file", "object", type(data).__name__)
    if data.get("format") != FORMAT:
        raise _fail("format", "format", data.get("format"), format=FORMAT)
    version = data.get("version")
    if not any(_is_int(version, v) for v in (1, FORMAT_VERSION)):  # 1.0 and true are not 1
        raise _fail("version", "versions", version, v=FORMAT_VERSION)
    keys = _TOP_KEYS if version == FORMAT_VERSION else _TOP_KEYS_V1
    if set(data) != keys:
        raise _fail("progress file", "top", sorted(data), keys=", ".join(sorted(keys)))
    check_text(data["profile"], "profile", "profile")
    _time(data["exported_at"], "exported_at")
    completed = []
    for i, item in enumerate(_list(data, "completed")):
        e = _entry(item, f"completed[{i}]", {"section", "at"})
        s = _checked(check_section, e["section"], f"completed[{i}].section", _SECTION)
        completed.append((s, _time(e["at"], f"completed[{i}].at")))
    assessments = []
    for i, item in enumerate(_list(data, "assessments")):
        e = _entry(item, f"assessments[{i}]", {"section", "status", "at"})
        s = _checked(check_section, e["section"], f"assessments[{i}].section", _SECTION)
        if e["status"] not in ASSESSMENTS:
            options = {"zh": " 或 ".join(ASSESSMENTS), "en": " or ".join(ASSESSMENTS)}
            raise _fail(f"assessments[{i}].status", "status", e["status"], options=options)
        assessments.append((s, e["status"], _time(e["at"], f"assessments[{i}].at")))
    attempts = [_attempt(item, f"attempts[{i}]") for i, item in enumerate(_list(data, "attempts"))]
    visit = None
    if data["last_section"] is not None:
        e = _entry(data["last_section"], "last_section", {"section", "at"})
        s = _checked(check_section, e["section"], "last_section.section", _SECTION)
        visit = (s, _time(e["at"], "last_section.at"))
    notes, marks = [], []
    if version == FORMAT_VERSION:
        notes = [_note(item, f"notes[{i}]") for i, item in enumerate(_list(data, "notes"))]
        marks = [_bookmark(m, f"bookmarks[{i}]") for i, m in enumerate(_list(data, "bookmarks"))]
    return {"completed": completed, "assessments": assessments, "attempts": attempts,
            "visit": visit, "notes": notes, "bookmarks": marks}  # fmt: skip


def _note(item: object, field: str) -> tuple[Any, ...]:
    e = _entry(item, field, {"id", "section", "text", "created", "at", "deleted"})
    note_id = check_text(e["id"], "note_id", f"{field}.id")
    section = _checked(check_section, e["section"], f"{field}.section", _SECTION)
    if type(e["deleted"]) is not bool:
        raise _fail(f"{field}.deleted", "bool", e["deleted"])
    if e["deleted"] and e["text"] == "":  # a deleted note keeps only its id and times
        text = ""
    else:
        text = check_text(e["text"], "note", f"{field}.text")
    created, at = _time(e["created"], f"{field}.created"), _time(e["at"], f"{field}.at")
    return (note_id, section, text, created, at, int(e["deleted"]))


def _bookmark(item: object, field: str) -> tuple[Any, ...]:
    e = _entry(item, field, {"section", "marked", "at"})
    section = _checked(check_section, e["section"], f"{field}.section", _SECTION)
    if type(e["marked"]) is not bool:
        raise _fail(f"{field}.marked", "bool", e["marked"])
    return (section, int(e["marked"]), _time(e["at"], f"{field}.at"))


def _attempt(item: object, field: str) -> tuple[Any, ...]:
    e = _entry(item, field, {"exercise", "answer", "correct", "diagnosis", "at"})
    exercise = _checked(check_exercise, e["exercise"], f"{field}.exercise", "exercise")
    if not any(e["correct"] is flag for flag in (True, False, None)):  # 1 and 0 are not flags
        raise _fail(f"{field}.correct", "flag", e["correct"])
    answer = check_text(e["answer"], answer_kind(exercise), f"{field}.answer")
    diagnosis = e["diagnosis"]
    if diagnosis is not None:
        diagnosis = verdict_data(check_text(diagnosis, "diagnosis", f"{field}.diagnosis"))
    return (exercise, answer, e["correct"], diagnosis, _time(e["at"], f"{field}.at"))


def check_attempt(exercise: str, answer: str, diagnosis: str | None) -> tuple[str, str, str | None]:
    """An attempt's exercise id (:func:`check_exercise`, else ``ValueError``), its answer
    without surrounding blanks and its diagnosis, each text within its kind's limit (else
    ``TextError``); the diagnosis must be a verdict as data (:func:`verdict_data`), else
    ``InputError``."""
    check_exercise(exercise)
    answer = check_text(answer, answer_kind(exercise))
    if diagnosis is not None:
        diagnosis = check_text(diagnosis, "diagnosis")
        if verdict_data(diagnosis) is None:
            raise InputError(
                f"diagnosis: expected a verdict as JSON data, found {diagnosis[:40]!r}",
                f"diagnosis：应为 JSON 格式的判定数据，实际是 {diagnosis[:40]!r}",
            )
    return exercise, answer, diagnosis


def verdict_data(text: str) -> str | None:
    """A verdict kept as data (a JSON object with its kind); words from an older export are
    dropped, and the answer is graded again where it is shown."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return text if isinstance(data, dict) and isinstance(data.get("kind"), str) else None


def merge_into(db: Connection, profile: str, clean: dict[str, Any]) -> None:
    """Merge validated entries inside the caller's transaction; the newer entry always wins."""
    db.executemany(
        "INSERT INTO completions VALUES (?, ?, ?) ON CONFLICT (profile, section) DO UPDATE "
        "SET completed_at = excluded.completed_at "
        "WHERE excluded.completed_at < completions.completed_at",
        [(profile, s, at) for s, at in clean["completed"]],
    )
    db.executemany(
        "INSERT INTO assessments VALUES (?, ?, ?, ?) ON CONFLICT (profile, section) DO UPDATE "
        "SET status = excluded.status, updated_at = excluded.updated_at "
        "WHERE excluded.updated_at > assessments.updated_at",
        [(profile, s, st, at) for s, st, at in clean["assessments"]],
    )
    db.executemany(
        "INSERT INTO attempts (profile, exercise, answer, correct, diagnosis, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        [(profile, *row) for row in clean["attempts"]],
    )
    if clean["visit"] is not None:
        db.execute(
            "INSERT INTO visits VALUES (?, ?, ?) ON CONFLICT (profile) DO UPDATE SET "
            "section = excluded.section, visited_at = excluded.visited_at "
            "WHERE excluded.visited_at > visits.visited_at",
            (profile, *clean["visit"]),
        )
    db.executemany(  # the newer edit of a note wins, whichever side it is on; ids never repeat
        "INSERT INTO notes VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (profile, id) DO UPDATE "
        "SET section = excluded.section, text = excluded.text, updated_at = excluded.updated_at, "
        "deleted = excluded.deleted WHERE excluded.updated_at > notes.updated_at",
        [(profile, i, s, t, c, at, d) for i, s, t, c, at, d in clean["notes"]],
    )
    db.executemany(
        "INSERT INTO bookmarks VALUES (?, ?, ?, ?) ON CONFLICT (profile, section) DO UPDATE "
        "SET marked = excluded.marked, updated_at = excluded.updated_at "
        "WHERE excluded.updated_at > bookmarks.updated_at",
        [(profile, *row) for row in clean["bookmarks"]],
    )
