"""A progress file that is busy (another process holds its lock) or read-only: reading still
works; every write is refused with one line naming the file and why, in the learner's language
(CLI exit 2, web 503 when busy and 409 when read-only), and nothing changes."""

from __future__ import annotations

import html as html_lib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from store_support import lock_held, without_root_rights
from typer.testing import CliRunner
from web_support import ORIGIN, post_form

from attnlab.cli.main import app
from attnlab.progress.store import ProgressStore, StoreBusy
from attnlab.web.app import create_app

pytestmark = pytest.mark.process

DB = "progress.sqlite3"
GOOD_EXPORT = {
    "format": "attnlab-progress", "version": 1, "profile": "default",
    "exported_at": "2026-11-29T10:00:00+00:00",
    "completed": [{"section": 2, "at": "2026-11-29T10:00:00+00:00"}],
    "assessments": [], "attempts": [], "last_section": None,
}  # fmt: skip


def _fill(data_dir: Path) -> dict:
    with ProgressStore.open(data_dir) as store:
        store.mark_complete(5)
        store.record_attempt("check-5", "saved before", None)
    return _saved(data_dir)


def _saved(data_dir: Path) -> dict:
    with ProgressStore.open(data_dir) as store:
        data = store.export_dict()
    data.pop("exported_at")
    return data


def _error_line(html: str) -> str:
    found = re.search(r'<p class="error-message" id="error-message">(.*?)</p>', html, re.S)
    assert found, html[:300]
    assert "\n" not in found.group(1) and "Traceback" not in html
    return html_lib.unescape(found.group(1))


def _cli(*args: str, stdin: str = ""):
    return CliRunner().invoke(app, ["--lang", "en", *args], input=stdin)


def _refused(result, *patterns: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for pattern in patterns:
        assert re.search(pattern, lines[0]), lines[0]


def test_busy_store_refuses_writes_in_one_line_and_still_reads(tmp_path, monkeypatch) -> None:
    before = _fill(tmp_path)
    good = tmp_path / "good.json"
    good.write_text(json.dumps(GOOD_EXPORT), encoding="utf-8")
    monkeypatch.setenv("ATTNLAB_BUSY_TIMEOUT", "0.2")
    d = str(tmp_path)
    busy = rf"{re.escape(str(tmp_path / DB))} is busy: another program held its lock for more "
    with lock_held(tmp_path / DB):
        _refused(_cli("quiz", "--section", "0", "--data-dir", d, stdin="x\nu\n"), busy)
        _refused(_cli("progress", "reset", "--yes", "--data-dir", d), busy)
        _refused(_cli("progress", "import", str(good), "--data-dir", d), busy, "nothing was saved")
        zh = CliRunner().invoke(app, ["progress", "reset", "--yes", "--data-dir", d])
        _refused(zh, "正被另一个程序占用", re.escape(str(tmp_path / DB)))
        summary = _cli("progress", "--data-dir", d)  # WAL: readers never wait for a writer
        assert summary.exit_code == 0 and "1 of 20" in summary.stdout, summary.output

        client = TestClient(create_app(tmp_path, figures_on=False), base_url=ORIGIN)
        assert client.get("/lesson").status_code == 200
        assert client.get("/section/4").status_code == 200  # the bookmark waits, the page not
        r = post_form(client, "/section/4/answer", answer="while busy")
        assert r.status_code == 503 and "正被另一个程序占用" in _error_line(r.text)
        r = post_form(client, "/section/4/complete?lang=en", back="section")
        assert r.status_code == 503 and re.search(busy, _error_line(r.text))
        r = post_form(client, "/exercise/9c?lang=en", answer="1.599")
        assert r.status_code == 503
    assert _saved(tmp_path) == before
    r = post_form(client, "/section/4/answer", answer="after the lock")
    assert r.status_code == 303, "the server recovers once the lock is gone"


def test_busy_timeout_comes_from_the_environment_and_is_checked(tmp_path, monkeypatch) -> None:
    _fill(tmp_path)
    late = pytest.raises(StoreBusy, match=r"held its lock for more than 0\.1 s")
    with lock_held(tmp_path / DB), ProgressStore(tmp_path / DB, busy_timeout=0.1) as store, late:
        store.mark_complete(1)
    monkeypatch.setenv("ATTNLAB_BUSY_TIMEOUT", "soon")
    r = _cli("progress", "--data-dir", str(tmp_path))
    _refused(r, r"ATTNLAB_BUSY_TIMEOUT must be a number of seconds from 0 to 3600, got 'soon'")


# Runs in a child process whose permission bits apply even to root (store_support).
READ_ONLY = r"""
import json, os, sys, threading
from pathlib import Path
from fastapi.testclient import TestClient
from typer.testing import CliRunner
from attnlab.cli.main import app
from attnlab.web.app import create_app
from attnlab.web.common import Settings
data, good, unreadable, out_file, tests = sys.argv[1:6]
sys.path.insert(0, tests)
from web_support import ORIGIN, post_form

out = {}
def run(name, *args, stdin=""):
    r = CliRunner().invoke(app, [*args, "--data-dir", data], input=stdin)
    out[name] = [r.exit_code, r.stdout, r.stderr]
run("progress", "--lang", "en", "progress")
run("export", "--lang", "en", "progress", "export", out_file)
run("quiz", "--lang", "en", "quiz", "--section", "0", stdin="x\nu\n")
run("quiz_zh", "quiz", "--section", "0", stdin="x\nu\n")
run("reset", "--lang", "en", "progress", "reset", "--yes")
run("import", "--lang", "en", "progress", "import", good)
run("unreadable", "--lang", "en", "progress", "import", unreadable)
web = TestClient(create_app(data, figures_on=False), base_url=ORIGIN)
out["page"] = [web.get("/section/3?lang=en").status_code, "", ""]
for lang in ("en", "zh"):
    r = post_form(web, f"/section/3/answer?lang={lang}", answer="x")
    out[f"web_{lang}"] = [r.status_code, r.text, ""]
settings = Settings(Path(data), None, "en", False)  # a server thread that stays alive
held, finish = threading.Event(), threading.Event()
def worker():
    settings.store().summary()
    held.set()
    finish.wait(60)
thread = threading.Thread(target=worker)
thread.start()
held.wait(60)
os.chmod(data, 0o755)  # the learner fixes the permissions; the running server saves again
for name in os.listdir(data):
    os.chmod(os.path.join(data, name), 0o644)
try:
    settings.store().record_attempt("check-3", "saved by the server", None)
    out["fixed"] = [0, "", ""]
except Exception as exc:
    out["fixed"] = [1, "", str(exc)]
finish.set()
thread.join()
r = post_form(web, "/section/3/answer", answer="once fixed")
out["web_fixed"] = [r.status_code, r.text, ""]
print(json.dumps(out))
"""


def _read_only_file(data_dir: Path) -> tuple[str, str]:
    (data_dir / DB).chmod(0o444)
    return "the file's permissions do not allow writing", "文件权限不允许写入"


def _read_only_folder(data_dir: Path) -> tuple[str, str]:
    data_dir.chmod(0o555)
    return f"its folder {data_dir} is read-only", f"所在文件夹 {data_dir} 是只读的"


@pytest.mark.slow
@pytest.mark.parametrize("make_read_only", [_read_only_file, _read_only_folder])
def test_read_only_store_is_read_and_every_write_is_refused(tmp_path: Path, make_read_only):
    prefix = without_root_rights()
    data = tmp_path / "data"
    before = _fill(data)
    good, unreadable = tmp_path / "good.json", tmp_path / "secret.json"
    good.write_text(json.dumps(GOOD_EXPORT), encoding="utf-8")
    unreadable.write_text(json.dumps(GOOD_EXPORT), encoding="utf-8")
    unreadable.chmod(0o000)
    why_en, why_zh = make_read_only(data)
    tests = Path(__file__).parent  # web_support, for the child's form POSTs
    paths = [str(data), str(good), str(unreadable), str(tmp_path / "out.json"), str(tests)]
    try:
        done = subprocess.run(
            [*prefix, sys.executable, "-c", READ_ONLY, *paths],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    finally:
        data.chmod(0o755)
        (data / DB).chmod(0o644)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)
    code, stdout, _ = out["progress"]
    assert code == 0 and "Week progress: 1 of 20" in stdout, out["progress"]
    assert out["export"][0] == 0, out["export"]
    exported = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert exported["attempts"][0]["answer"] == "saved before"
    path = re.escape(str(data / DB))
    en = rf"{path} is read-only \({re.escape(why_en)}\); nothing was saved"
    for name in ("quiz", "reset", "import"):
        code, _, err = out[name]
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and re.search(en, lines[0]), (name, err)
    zh = rf"{path} 是只读的（{re.escape(why_zh)}）"
    assert out["quiz_zh"][0] == 2 and re.search(zh, out["quiz_zh"][2]), out["quiz_zh"]
    code, _, err = out["unreadable"]
    assert code == 2 and "expected a readable progress file, found Permission denied" in err
    assert out["page"][0] == 200, "reading pages must work on a read-only store"
    assert out["web_en"][0] == 409 and re.search(en, _error_line(out["web_en"][1]))
    assert out["web_zh"][0] == 409 and re.search(zh, _error_line(out["web_zh"][1]))
    assert out["fixed"][0] == 0, out["fixed"]
    assert out["web_fixed"][0] == 303, _error_line(out["web_fixed"][1])
    with ProgressStore.open(data) as store:
        answers = [a["answer"] for a in store.attempts()]
        assert answers == ["saved before", "saved by the server", "once fixed"]
        assert store.summary().completed == tuple(c["section"] for c in before["completed"])


def test_a_side_file_deleted_while_it_is_looked_at_is_not_read_only(tmp_path, monkeypatch) -> None:
    """Another connection's close deletes ``-shm`` between ``exists()`` and ``access()``: the
    store is writable, not "read-only (progress.sqlite3-shm is read-only)"."""
    from attnlab.progress import access

    db = tmp_path / "progress.sqlite3"
    db.write_bytes(b"")
    shm = access.sidecar(db, "-shm")
    shm.write_bytes(b"")
    real = access._writable

    def racing(path: Path) -> bool:
        if path == shm:
            shm.unlink()  # the last other connection closes now
            return False  # access() on a vanished file
        return real(path)

    monkeypatch.setattr(access, "_writable", racing)
    assert access.why_read_only(db) is None
