"""A profile's progress, or a whole class, as one file: build it, validate it and merge it into
another store.

One profile's export is :mod:`attnlab.progress.exchange`'s format
(:meth:`ClassExchangeMixin.export_dict`, :meth:`ClassExchangeMixin.import_dict`).

The file holds the class (id, name, the teacher key's salt and hash, so the same key opens it
on the new machine) and each learner's name, profile and progress in the per-profile export
format (:mod:`attnlab.progress.exchange`)::

    {"format": "attnlab-class", "version": 1, "exported_at": "...",
     "class": {"id": 1, "name": "week 7", "key_salt": "<hex>", "key_hash": "<hex>",
               "created": "..."},
     "learners": [{"name": "Ada", "profile": "c1-1", "progress": {...}}]}

Invitation links and sessions stay behind: learners join the new machine with new links.
A file that breaks any rule is refused as a whole with one line; nothing is merged from it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from attnlab.progress import exchange
from attnlab.progress.backend import Connection
from attnlab.progress.classes import CLASS, CLASSES_LOCK, check_name
from attnlab.text.errors import InputError

if TYPE_CHECKING:
    from attnlab.progress.store import ProgressStore

FORMAT = "attnlab-class"
FORMAT_VERSION = 1
_HEX = re.compile(r"[0-9a-f]{32,128}")


def _fail(field: str, expected: str, found: object, zh_expected: str) -> InputError:
    shown = repr(found)[:60]
    return InputError(f"{field}: expected {expected}, found {shown}",
                      f"{field}：应为{zh_expected}，实际是 {shown}")  # fmt: skip


def validate_class(data: object) -> dict[str, Any]:
    """``data`` checked in full; every learner's progress validated
    (:func:`attnlab.progress.exchange.validate_export`). Raises ``InputError`` naming the
    first field that breaks a rule."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise _fail("format", f"{FORMAT!r}", found, f" {FORMAT!r}")
    if data.get("version") != FORMAT_VERSION:
        raise _fail("version", str(FORMAT_VERSION), data.get("version"), f" {FORMAT_VERSION}")
    head = data.get("class")
    if not isinstance(head, dict):
        raise _fail("class", "an object", head, "一个对象")
    cid = head.get("id")
    if isinstance(cid, bool) or not isinstance(cid, int) or not 0 < cid < 10**9:
        raise _fail("class.id", "a positive integer", cid, "正整数")
    check_name(head.get("name"), CLASS)
    for key in ("key_salt", "key_hash"):
        if not isinstance(head.get(key), str) or not _HEX.fullmatch(head[key]):
            raise _fail(f"class.{key}", "hexadecimal text", head.get(key), "十六进制文本")
    created = head.get("created")
    if not isinstance(created, str) or not 0 < len(created) <= 40:
        raise _fail("class.created", "an ISO 8601 time", created, " ISO 8601 时间")
    learners = data.get("learners")
    if not isinstance(learners, list):
        raise _fail("learners", "a list", learners, "列表")
    clean: list[tuple[str, str, dict[str, Any]]] = []
    seen: set[str] = set()
    for i, item in enumerate(learners):
        if not isinstance(item, dict) or set(item) != {"name", "profile", "progress"}:
            raise _fail(f"learners[{i}]", "{name, profile, progress}", item,
                        " {name, profile, progress}")  # fmt: skip
        name, profile = check_name(item["name"]), item["profile"]
        if not isinstance(profile, str) or not re.fullmatch(rf"c{cid}-[1-9][0-9]*", profile):
            raise _fail(f"learners[{i}].profile", f"'c{cid}-N'", profile, f" 'c{cid}-N'")
        if profile in seen or name in {n for n, _, _ in clean}:
            raise _fail(f"learners[{i}]", "each learner once", name, "每个学员只出现一次")
        seen.add(profile)
        progress = exchange.validate_export(item["progress"])
        clean.append((name, profile, progress))
    return {"class": head, "learners": clean}


class ClassExchangeMixin:
    """Export and import of a profile or a whole class, methods of
    :class:`~attnlab.progress.store.ProgressStore`."""

    _clock: Callable[[], str]
    profile: str

    def _rows(self, sql: str) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def attempts(self, exercise: str | None = None) -> list[dict[str, Any]]:
        raise NotImplementedError

    def _write(self, scope: str | None = None) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    def _read(self) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    def as_profile(self, profile: str) -> ProgressStore:
        raise NotImplementedError

    def class_learners(self, class_id: int) -> list[tuple[str, str]]:
        raise NotImplementedError

    def export_dict(self) -> dict[str, Any]:
        """This profile's progress in the export format (:mod:`attnlab.progress.exchange`)."""
        q = self._rows
        with self._read():
            return exchange.build_export(
                self.profile,
                self._clock(),
                completed=q("SELECT section, completed_at FROM completions WHERE profile = ?"),
                assessments=q(
                    "SELECT section, status, updated_at FROM assessments WHERE profile = ?"
                ),
                attempts=self.attempts(),
                visit=q("SELECT section, visited_at FROM visits WHERE profile = ?"),
                notes=q("SELECT id, section, text, created_at, updated_at, deleted FROM notes "
                        "WHERE profile = ?"),
                bookmarks=q("SELECT section, marked, updated_at FROM bookmarks WHERE profile = ?"),
            )  # fmt: skip

    def import_dict(self, data: object) -> dict[str, int]:
        """Merge an export into this profile, keeping the newer of any two entries.

        The data is validated in full first (:func:`attnlab.progress.exchange.validate_export`); an
        invalid export raises ``InputError`` and changes nothing. Returns how many entries of
        each kind the file held.
        """
        clean = exchange.validate_export(data)
        with self._write() as db:
            exchange.merge_into(db, self.profile, clean)
        return {k: len(clean[k]) for k in ("completed", "assessments", "attempts", "notes")}

    def export_class(self, class_id: int) -> dict[str, Any]:
        """Class ``class_id`` with every learner's progress (``InputError`` if there is none)."""
        learners = self.class_learners(class_id)  # checks the class exists
        with self._read() as db:
            row = db.execute(
                "SELECT id, name, key_salt, key_hash, created_at FROM classes WHERE id = ?",
                (class_id,),
            ).fetchone()
            people = [
                {"name": name, "profile": profile,
                 "progress": self.as_profile(profile).export_dict()}
                for name, profile in learners
            ]  # fmt: skip
        head = dict(zip(("id", "name", "key_salt", "key_hash", "created"), row, strict=True))
        return {"format": FORMAT, "version": FORMAT_VERSION,
                "exported_at": self._clock(), "class": head, "learners": people}  # fmt: skip

    def import_class(self, data: object) -> dict[str, int]:
        """Merge a class file into this store in one transaction: the class is created when its id
        is free, merged when the id holds the same class (same key hash), else refused; each
        learner's progress is merged as ``attnlab progress import`` does. Returns the class id and
        the number of learners."""
        clean = validate_class(data)
        head = clean["class"]
        with self._write(CLASSES_LOCK) as db:  # class ids are shared by every profile
            row = db.execute("SELECT key_hash FROM classes WHERE id = ?", (head["id"],)).fetchone()
            if row is not None and row[0] != head["key_hash"]:
                raise InputError(
                    f"class {head['id']}: this store already has another class with that id; "
                    "nothing was imported",
                    f"班级 {head['id']}：本存储已有另一个同编号的班级；未导入任何内容",
                )
            if row is None:
                db.execute(
                    "INSERT INTO classes VALUES (?, ?, ?, ?, ?)",
                    (head["id"], head["name"], head["key_salt"], head["key_hash"],
                     head["created"]),
                )  # fmt: skip
            for name, profile, progress in clean["learners"]:
                db.execute(
                    "INSERT INTO class_learners VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    (head["id"], name, profile, self._clock()),
                )
                owner = db.execute(
                    "SELECT class_id, name FROM class_learners WHERE profile = ?", (profile,)
                ).fetchone()
                if owner is None or tuple(owner) != (head["id"], name):
                    raise InputError(
                        f"learners: {profile} is another learner in this store; "
                        "nothing was imported",
                        f"学员：{profile} 在本存储中是另一位学员；未导入任何内容",
                    )
                exchange.merge_into(db, profile, progress)
        return {"class": int(head["id"]), "learners": len(clean["learners"])}
