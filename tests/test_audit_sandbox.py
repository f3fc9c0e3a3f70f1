"""The learner's code cannot reach the verdict, the machine or the audit's own processes.

The judge never imports the learner's file, so whatever the file does to its own process
(patch ``math.sqrt``, ``F.softmax``, the default dtype, forge a result) cannot change a verdict;
in bubblewrap the code sees no store, no ``$HOME``, no network and no other process, and nothing
it starts outlives the audit, even when the keeper is killed. The learner files are written
here; each prints what it managed, and the report's captured output is read back.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil
import pytest
from learner_files import write_head
from store_support import wait_until

from attnlab.audit import run_audit, sandbox
from attnlab.audit.report import render

pytestmark = pytest.mark.sandbox


def _learner(folder: Path, name: str, top: str = "", init: str = "", scale: str = "") -> str:
    return write_head(folder, name, top=top, init=init, scale=scale)


def _statuses(result: dict[str, object]) -> dict[int, str]:
    return {i["item"]: i["status"] for i in result["items"]}  # type: ignore[index, union-attr]


@pytest.fixture(params=["bubblewrap", "plain"])
def mode(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[str]:
    """Both ways an audit runs: in bubblewrap (where it can) and in a plain process. The
    learner's processes carry this test's own tag (``ATTNLAB_TEST_PIDS``, passed into the
    sandbox), so tests running beside it do not see each other's processes."""
    monkeypatch.setenv(TAG, str(tmp_path))
    if request.param == "plain":
        monkeypatch.setenv(sandbox.SWITCH, "off")
    elif sandbox.isolation() is not None:
        if os.environ.get("ATTNLAB_REQUIRE_SANDBOX"):
            pytest.fail(f"bubblewrap cannot isolate learner code here ({sandbox.isolation()})")
        pytest.skip(f"bubblewrap cannot isolate learner code here ({sandbox.isolation()})")
    sandbox.isolation.cache_clear()
    yield request.param
    sandbox.isolation.cache_clear()


def test_patching_globals_cannot_change_a_verdict(tmp_path: Path, mode: str) -> None:
    """A head that forgot the scale fails item 4 whether or not its file replaces math.sqrt,
    F.softmax or the default dtype; the report names each replacement."""
    patches = textwrap.dedent("""
        math.sqrt = lambda v: 1.0
        _softmax = F.softmax
        F.softmax = lambda t, dim=None, **kw: _softmax(t, dim=dim, **kw)
        torch.set_default_dtype(torch.float64)
    """)
    plain = _learner(tmp_path, "no_scale", scale="1")
    patched = _learner(tmp_path, "no_scale_patched", top=patches, scale="math.sqrt(k.size(-1))")
    with ThreadPoolExecutor(max_workers=2) as pool:
        before, after = pool.map(run_audit, [plain, patched])
    assert before["exit_code"] == after["exit_code"] == 1, (before, after)
    assert _statuses(before) == _statuses(after) and _statuses(after)[4] == "FAIL", after
    evidence = next(i for i in after["items"] if i["item"] == 4)["evidence"]["en"]
    assert "1.000 = 1/√d_head" not in evidence, evidence
    text = render(after, "en")
    for name in ("math.sqrt", "torch.nn.functional.softmax", "default dtype to torch.float64"):
        assert name in text, text
    assert "你的文件替换了 math.sqrt" in render(after, "zh")
    assert after["side_effects"] and not before["side_effects"]


FORGER = """
forged = {"status": "ok", "kind": "head", "layout": None, "items": [
    {"item": n, "status": "PASS", "mistakes": [], "evidence": {"zh": "", "en": ""}}
    for n in range(1, 11)], "overall": {"status": "PASS"}}
text = json.dumps(forged)
print(text)
for arg in [a for a in sys.argv[1:] if os.path.isabs(a)]:  # the old runner's result path
    for target in (arg, arg + ".json", os.path.join(os.path.dirname(arg), "result.json")):
        try:
            with open(target, "w") as f:
                f.write(text)
        except OSError:
            pass
def parent_of(pid):
    try:
        return int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None
keeper = os.getppid()  # its own audit's keeper and judge only: other audits run beside it
family = [p for p in os.listdir("/proc") if p.isdigit() and parent_of(p) == keeper]
for pid in [str(keeper), *family]:
    try:
        cmd = open(f"/proc/{pid}/cmdline", "rb").read()
    except OSError:
        continue
    if b"attnlab.audit.runner" in cmd or b"keeper" in cmd:
        try:
            with open(f"/proc/{pid}/fd/1", "w") as f:
                f.write(text)
            os.kill(int(pid), signal.SIGKILL)
            print("forged", pid)
        except OSError:
            pass
"""


def test_a_forged_result_cannot_give_exit_0(tmp_path: Path, mode: str) -> None:
    """A head with no mask whose file writes an all-PASS result wherever it can (its own
    output, every path in its argv, the judge's and keeper's stdout, then kills them) fails."""
    spec = _learner(tmp_path, "forger", init=FORGER, scale="math.sqrt(k.size(-1))")
    path = Path(spec.rpartition(":")[0])
    path.write_text(path.read_text().replace("scores = scores.masked_fill", "pass  #"))
    result = run_audit(spec)
    assert result["exit_code"] != 0, result
    if result["status"] == "ok":
        assert _statuses(result)[5] == "FAIL", result


PROBES = """
found = {}
def attempt(name, action):
    try:
        action()
        found[name] = "done"
    except Exception as exc:
        found[name] = type(exc).__name__
attempt("read_store", lambda: open(STORE, "rb").read())
attempt("write_home", lambda: open(os.path.join(HOME, "attnlab-sandbox-probe"), "w").write("x"))
attempt("read_home", lambda: os.listdir(HOME) and open(HOME_FILE).read())
attempt("socket", lambda: socket.create_connection(("127.0.0.1", PORT), timeout=2).close())
attempt("delete_sibling", lambda: os.unlink(SIBLING))
attempt("write_next_to_file", lambda: open(NEXT, "w").write("x"))  # only in its own /tmp
found["processes"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
found["secret"] = os.environ.get("ATTNLAB_SANDBOX_SECRET")
print("PROBES " + json.dumps(found))
"""


@pytest.fixture
def server() -> Iterator[int]:
    """A TCP server on loopback that counts connections (it should get none)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(5)
        yield listener.getsockname()[1]


def test_learner_code_sees_no_store_home_network_or_process(
    tmp_path: Path, isolated: None, server: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = Path.home()
    data = tmp_path / "data"
    data.mkdir()
    (data / "progress.sqlite3").write_bytes(b"SQLite format 3\x00 learner notes")
    home_file = next((p for p in home.iterdir() if p.is_file()), home / ".profile")
    folder = tmp_path / "learner"
    folder.mkdir()
    (folder / "sibling.py").write_text("X = 1\n")
    monkeypatch.setenv("ATTNLAB_SANDBOX_SECRET", "do-not-pass")
    constants = (
        f"STORE = {str(data / 'progress.sqlite3')!r}\nHOME = {str(home)!r}\n"
        f"HOME_FILE = {str(home_file)!r}\nPORT = {server}\n"
        f"SIBLING = {str(folder / 'sibling.py')!r}\nNEXT = {str(folder / 'new.txt')!r}\n"
    )
    spec = _learner(folder, "prober", top=constants, init=PROBES)
    result = run_audit(spec)
    assert result["exit_code"] == 0 and result["isolated"], result
    line = next(
        ln for ln in result["output"]["stdout"]["text"].splitlines() if ln.startswith("PROBES ")
    )
    found = json.loads(line.removeprefix("PROBES "))
    for name in ("read_store", "write_home", "read_home", "socket", "delete_sibling"):
        assert found[name] != "done", (name, found)
    assert found["secret"] is None, found
    assert len(found["processes"]) <= 3, found  # bubblewrap's reaper, the learner, maybe a child
    assert (folder / "sibling.py").exists() and not (folder / "new.txt").exists()
    assert not (home / "attnlab-sandbox-probe").exists()


TAG = "ATTNLAB_TEST_PIDS"


def _marked(since: float) -> list[psutil.Process]:
    """Processes started since ``since`` that carry an audit's mark and this test's tag."""
    tag, found = os.environ.get(TAG), []
    for proc in psutil.process_iter(["create_time"]):
        with contextlib.suppress(psutil.Error):
            recent = proc.info["create_time"] >= since - 1
            if recent and proc.status() != psutil.STATUS_ZOMBIE:
                env = proc.environ()
                if sandbox.MARK in env and env.get(TAG) == tag:
                    found.append(proc)
    return found


SPAWNER = """
if not getattr(sys, "_spawned", False):
    sys._spawned = True
    def loop_forks():
        while True:
            if os.fork():
                os._exit(0)
    if os.fork() == 0:
        loop_forks()
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                     start_new_session=True)
    middle = os.fork()
    if middle == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(600)
        os._exit(0)
    os.waitpid(middle, 0)
"""


def _gone(since: float, seconds: float = 120.0) -> bool:
    for _ in range(int(seconds * 10)):
        if not _marked(since):
            return True
        time.sleep(0.1)
    return not _marked(since)


def test_no_descendant_outlives_the_audit(tmp_path: Path, mode: str) -> None:
    """A fork loop, a new-session child and a double-forked daemon all die with the audit."""
    since = time.time()
    spec = _learner(tmp_path, "spawner", init=SPAWNER)
    result = run_audit(spec)
    assert result["exit_code"] == 0, result
    assert result["stray_processes"] >= 3, result
    assert _gone(since), [p.cmdline() for p in _marked(since)]


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGSTOP])
def test_killing_or_stopping_the_keeper_leaves_nothing(
    tmp_path: Path, mode: str, how: signal.Signals
) -> None:
    """SIGKILL or SIGSTOP of the supervising process (what learner code outside a sandbox
    could do): the command still ends promptly with one line and exit 2, and every process
    of the audit dies."""
    since = time.time()
    spec = _learner(tmp_path, "looper", init=SPAWNER + "\nwhile True: time.sleep(0.1)\n")
    cli = subprocess.Popen(
        [sys.executable, "-m", "attnlab", "--lang", "en", "audit", spec, "--timeout", "300"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:

        def keepers() -> list[psutil.Process]:
            found = []
            for proc in psutil.Process(cli.pid).children():
                with contextlib.suppress(psutil.Error):  # an exited helper: a zombie a while
                    if proc.status() != psutil.STATUS_ZOMBIE and "keeper" in " ".join(
                        proc.cmdline()
                    ):
                        found.append(proc)
            return found

        # Until the learner's processes are up and the CLI has its one keeper.
        wait_until(
            lambda: len(_marked(since)) >= 4 and len(keepers()) == 1,
            "the learner's processes and the audit's one keeper",
        )
        found = keepers()
        assert len(found) == 1, found
        found[0].send_signal(how)
        out, err = cli.communicate(timeout=120)
    finally:
        with contextlib.suppress(ProcessLookupError):
            cli.kill()
    assert cli.returncode == 2, (out, err)
    text = out.decode() + err.decode()
    assert "the audit's keeper process was ended by SIGKILL" in text, text
    assert _gone(since), [p.cmdline() for p in _marked(since)]


HOG = """
if not getattr(sys, "_hogs", False):
    sys._hogs = []
    for _ in range(5):
        pid = os.fork()
        if pid == 0:
            try:
                block = torch.ones(64 * 2**20)  # 256 MiB each, touched
            finally:
                time.sleep(600)
        sys._hogs.append(pid)
    time.sleep(60)
"""


def test_a_tree_of_children_over_the_memory_cap_is_stopped(tmp_path: Path, mode: str) -> None:
    """Five children of 256 MiB each stay under the 1.5 GiB per-process cap but not under the
    tree's: the audit stops them all and says so. (Half the memory of the 512 MiB children it
    used to take, beside another test worker.)"""
    since = time.time()
    result = run_audit(_learner(tmp_path, "hog", init=HOG), timeout=120, memory_mb=1536)
    assert (result["exit_code"], result["where"]) == (2, "memory"), result
    assert "over the 1536.0 MiB cap" in result["error"]["en"], result["error"]
    assert _gone(since)
