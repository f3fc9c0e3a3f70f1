"""``attnlab progress export`` and ``import`` against hostile files: one line, exit 2, and
neither the store nor the target is changed (symlinks, devices, FIFOs, huge or deep JSON,
wrong JSON types)."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from attnlab.cli.main import app
from attnlab.progress.exchange import validate_export
from attnlab.progress.exchange_files import MAX_FILE_BYTES
from attnlab.progress.store import ProgressStore
from attnlab.text.errors import InputError

DB = "progress.sqlite3"
AT = "2026-11-29T10:00:00+00:00"


def _export(**changes: object) -> dict:
    base = {
        "format": "attnlab-progress", "version": 1, "profile": "default", "exported_at": AT,
        "completed": [{"section": 1, "at": AT}], "assessments": [], "last_section": None,
        "attempts": [{"exercise": "4c", "answer": "1.131", "correct": True, "diagnosis": None,
                      "at": AT}],
    }  # fmt: skip
    base.update(changes)
    return base


def _attempt(**changes: object) -> dict:
    return {**_export()["attempts"][0], **changes}


def _saved(data_dir: Path) -> dict:
    with ProgressStore.open(data_dir) as store:
        data = store.export_dict()
    data.pop("exported_at")
    return data


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A data folder with some progress in it."""
    with ProgressStore.open(tmp_path / "home") as store:
        store.mark_complete(7)
        store.record_attempt("check-7", "mine", None)
    return tmp_path / "home"


def _one_line_refusal(result, path: object, message: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert str(path) in lines[0] and re.search(message, lines[0]), lines[0]
    assert "Traceback" not in result.output


def _import(home: Path, path: object):
    return CliRunner().invoke(
        app, ["--lang", "en", "progress", "import", str(path), "--data-dir", str(home)]
    )


WRONG_TYPES = [
    (_export(version=1.0), r"version: expected the integer 1 or 2, found 1\.0"),
    (_export(version=True), r"version: expected the integer 1 or 2, found True"),
    (_export(attempts=[_attempt(correct=1)]), r"attempts\[0\]\.correct: expected true, false"),
    (_export(attempts=[_attempt(correct=0)]), r"attempts\[0\]\.correct: expected true, false"),
    (_export(attempts=[_attempt(correct=1.0)]), r"attempts\[0\]\.correct: expected true, false"),
    (_export(attempts=[_attempt(exercise=["4c"])]), r"attempts\[0\]\.exercise: expected a known"),
    (_export(attempts=[_attempt(exercise={"a": 1})]), r"attempts\[0\]\.exercise: expected a kno"),
    (_export(completed=[{"section": 1, "at": "0001-01-01T00:00:00+01:00"}]),
     r"completed\[0\]\.at: expected an ISO 8601 time"),
    (_export(completed=[{"section": 1.0, "at": AT}]), r"completed\[0\]\.section: expected an int"),
]  # fmt: skip


@pytest.mark.parametrize(("data", "message"), WRONG_TYPES)
def test_json_types_must_be_exact(home: Path, data: dict, message: str) -> None:
    with pytest.raises(InputError, match=message):
        validate_export(data)
    path = home.parent / "wrong.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    before = _saved(home)
    _one_line_refusal(_import(home, path), path, message)
    assert _saved(home) == before


BAD_CONTENT = [
    (b"\xff\xfe{}", r"expected UTF-8 text, found byte 0xff at offset 0"),
    (b'{"format": "attnlab-progress", "version": 1\xe9}', r"expected UTF-8 text, found byte 0xe9"),
    (b"[" * 200_000 + b"]" * 200_000, r"expected JSON nested a few levels deep, found far deeper"),
    (b'{"a":' * 100_000 + b"1" + b"}" * 100_000, r"expected JSON nested a few levels deep"),
    (json.dumps(_export()).replace('"version": 1', '"version": 1' + "0" * 5000).encode(),
     r"expected integers of at most 18 digits, found one of 5001"),
    (json.dumps(_export(completed=[{"section": 10**19, "at": AT}])).encode(),
     r"expected integers of at most 18 digits, found one of 20"),
    (json.dumps(_export()).replace('"version": 1', '"version": NaN').encode(),
     r"expected JSON numbers, found NaN \(not JSON\)"),
    (json.dumps(_export()).replace('"version": 1', '"version": 1, "version": 2').encode(),
     r"expected each key once in an object, found 'version' twice"),
    (json.dumps(_export()).replace('"correct": true', '"correct": true, "correct": false')
     .encode(), r"expected each key once in an object, found 'correct' twice"),
    (b"\xef\xbb\xbf" + json.dumps(_export()).encode().replace(b'"default"', b'"\xe9"'),
     r"expected UTF-8 text, found byte 0xe9 at offset \d+"),
]  # fmt: skip


@pytest.mark.parametrize(("content", "message"), BAD_CONTENT)
def test_import_refuses_bad_content_and_changes_nothing(
    home: Path, content: bytes, message: str
) -> None:
    path = home.parent / "in.json"
    path.write_bytes(content)
    before = _saved(home)
    _one_line_refusal(_import(home, path), path, message)
    assert _saved(home) == before


def test_import_refuses_a_file_over_the_cap_without_reading_it_all(home: Path) -> None:
    path = home.parent / "big.json"
    with path.open("wb") as fh:
        fh.truncate(MAX_FILE_BYTES + 1)  # sparse: costs no disk
    before = _saved(home)
    _one_line_refusal(_import(home, path), path, rf"at most {MAX_FILE_BYTES} bytes, found more")
    assert _saved(home) == before


def test_import_refuses_paths_it_cannot_read(home: Path) -> None:
    loop = home.parent / "loop.json"
    os.symlink(home.parent / "loop2.json", loop)
    os.symlink(loop, home.parent / "loop2.json")
    before = _saved(home)
    _one_line_refusal(_import(home, loop), loop, r"expected a progress file, found a symbolic link")
    folder = home.parent / "folder.json"
    folder.mkdir()
    _one_line_refusal(_import(home, folder), folder, r"expected a progress file, found a direc")
    missing = home.parent / "missing.json"
    _one_line_refusal(_import(home, missing), missing, r"found no such file")
    assert _saved(home) == before


def test_import_refuses_a_symbolic_link_even_to_a_good_file(home: Path) -> None:
    real = home.parent / "real.json"
    real.write_text(json.dumps(_export()), encoding="utf-8")
    link = home.parent / "link.json"
    link.symlink_to(real)
    before = _saved(home)
    _one_line_refusal(_import(home, link), link, r"expected a progress file, found a symbolic link")
    assert _saved(home) == before


def test_import_opens_without_following_a_link_made_after_the_look(home, monkeypatch) -> None:
    """The file is opened with O_NOFOLLOW: a link swapped in after the lstat is refused too."""
    from attnlab.progress import exchange_files as store_io

    real = home.parent / "real.json"
    real.write_text(json.dumps(_export()), encoding="utf-8")
    link = home.parent / "link.json"
    link.symlink_to(real)
    looked = os.lstat(real)  # what the look saw: a regular file, before the swap
    monkeypatch.setattr(store_io.os, "lstat", lambda path: looked)
    with pytest.raises(InputError, match=r"expected a progress file, found a symbolic link"):
        store_io.read_export(link)


def test_a_byte_after_the_byte_order_mark_is_named_at_its_offset(home: Path) -> None:
    path = home.parent / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf{\xff}")
    _one_line_refusal(_import(home, path), path, r"found byte 0xff at offset 4$")


def test_import_accepts_a_byte_order_mark(home: Path) -> None:
    path = home.parent / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(_export()).encode())
    r = _import(home, path)
    assert r.exit_code == 0, r.output
    assert set(_saved(home)["completed"][i]["section"] for i in range(2)) == {1, 7}


# In a child process with a memory cap and a deadline: reading /dev/zero whole would exhaust
# memory, and opening a FIFO without a writer waits forever.
SPECIAL = r"""
import json, resource, sys
resource.setrlimit(resource.RLIMIT_DATA, (3 << 30, 3 << 30))
from typer.testing import CliRunner
from attnlab.cli.main import app
out = {}
for path in sys.argv[2:]:
    argv = ["--lang", "en", "progress", "import", path, "--data-dir", sys.argv[1]]
    r = CliRunner().invoke(app, argv)
    out[path] = [r.exit_code, r.stderr]
print(json.dumps(out))
"""


@pytest.mark.process
def test_import_refuses_devices_and_fifos_at_once(home: Path) -> None:
    fifo = home.parent / "pipe.json"
    os.mkfifo(fifo)
    paths = ["/dev/zero", str(fifo)]
    before = _saved(home)
    done = subprocess.run(
        [sys.executable, "-c", SPECIAL, str(home), *paths],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)
    kinds = {"/dev/zero": "a character device", str(fifo): r"a FIFO \(named pipe\)"}
    for path, (code, err) in out.items():
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1, (path, code, err)
        assert re.search(rf"{re.escape(path)}: expected a progress file, found {kinds[path]}", err)
    assert _saved(home) == before


def _export_to(home: Path, target: Path):
    return CliRunner().invoke(
        app, ["--lang", "en", "progress", "export", str(target), "--data-dir", str(home)]
    )


def _leftovers(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]


def test_export_replaces_a_regular_file_whole_and_keeps_its_permissions(home: Path) -> None:
    target = home.parent / "mine.json"
    target.write_text("old content")
    target.chmod(0o640)
    r = _export_to(home, target)
    assert r.exit_code == 0, r.output
    assert json.loads(target.read_text(encoding="utf-8"))["completed"][0]["section"] == 7
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert _leftovers(home.parent) == []


def _symlink(folder: Path) -> Path:
    real = folder / "real.json"
    real.write_text("precious")
    link = folder / "link.json"
    link.symlink_to(real)
    return link


def _dangling(folder: Path) -> Path:
    link = folder / "dangling.json"
    link.symlink_to(folder / "nowhere.json")
    return link


def _fifo(folder: Path) -> Path:
    os.mkfifo(folder / "pipe.json")
    return folder / "pipe.json"


def _device(folder: Path) -> Path:
    try:
        os.mknod(folder / "null", stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("creating a device node needs root (CAP_MKNOD)")
    return folder / "null"


def _folder(folder: Path) -> Path:
    (folder / "out").mkdir()
    return folder / "out"


def _database(folder: Path) -> Path:
    return folder / "home" / DB


def _hard_link_to_database(folder: Path) -> Path:
    os.link(folder / "home" / DB, folder / "alias.json")
    return folder / "alias.json"


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (_symlink, r"expected a regular file or a new name, found a symbolic link to"),
        (_dangling, r"found a symbolic link to .*nowhere\.json"),
        (_fifo, r"found a FIFO \(named pipe\); not replaced"),
        (_device, r"found a character device; not replaced"),
        (_folder, r"found a directory; not replaced"),
        (_database, r"found .*progress\.sqlite3, one of the progress database's own files"),
        (_hard_link_to_database, r"found .*progress\.sqlite3, one of the progress database's"),
    ],
)
def test_export_never_replaces_a_link_a_device_or_the_database(home, make, message) -> None:
    target = make(home.parent)
    before = os.lstat(target)
    pointed = target.resolve().read_bytes() if target.is_symlink() and target.exists() else None
    saved = _saved(home)
    _one_line_refusal(_export_to(home, target), target, message)
    after = os.lstat(target)
    assert (after.st_ino, after.st_mode) == (before.st_ino, before.st_mode), "target replaced"
    if pointed is not None:
        assert target.resolve().read_bytes() == pointed
    assert _leftovers(home.parent) == []
    assert _saved(home) == saved


@pytest.mark.parametrize("suffix", ["", "-journal", "-wal", "-shm"])
@pytest.mark.parametrize("spelling", ["plain", "dotdot", "linked-folder"])
def test_export_never_writes_a_name_sqlite_keeps_for_the_database(home, suffix, spelling):
    (home.parent / "alias").symlink_to(home, target_is_directory=True)
    folder = {"plain": home, "dotdot": home / ".." / "home", "linked-folder": home.parent / "alias"}
    target = folder[spelling] / f"{DB}{suffix}"
    existed = {p.name for p in home.iterdir()}
    saved = _saved(home)
    _one_line_refusal(
        _export_to(home, target), target,
        rf"expected a file for the export, found .*{DB}{suffix}, one of the progress database's "
        "own files; not written",
    )  # fmt: skip
    assert {p.name for p in home.iterdir()} == existed and _leftovers(home) == []
    assert _saved(home) == saved
