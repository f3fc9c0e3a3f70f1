"""The audit's last walls (issue 33): the judge imports nothing of the learner's, every resource
of the learner's process tree is capped, nothing the learner's process says sizes the judge,
root-only files stay hidden, and outputs the judge cannot compare are named.

Each learner file is written here and audited for real (keeper, judge, learner's process).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from learner_files import write_head

from attnlab.audit import run_audit, sandbox
from attnlab.audit.report import render

pytestmark = pytest.mark.sandbox


def learner(folder: Path, name: str = "head", **hooks: str) -> str:
    """Write a learner file in ``folder`` (:func:`learner_files.head_source`); its spec."""
    return write_head(folder, name, **hooks)


#: Standard-library names the judge imports: each planted copy leaves a file behind when it runs.
PLANTED = ("functools", "json", "re", "enum", "typing", "copy", "struct", "warnings", "inspect")
PLANT = """
import os
open(os.path.join({marks!r}, "{name}-%d" % os.getpid()), "w").write("ran")
raise ImportError("a planted {name}.py ran")
"""


def test_the_judge_imports_nothing_from_the_learners_folder_or_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stdlib-named files beside the audited file and in the folder the audit starts from:
    none of them runs (in the judge or anywhere), and the correct head passes."""
    marks = tmp_path / "marks"
    marks.mkdir()
    spec = learner(tmp_path / "submitted")
    here = tmp_path / "here"
    here.mkdir()
    for folder in (tmp_path / "submitted", here):
        for name in PLANTED:
            (folder / f"{name}.py").write_text(PLANT.format(marks=str(marks), name=name))
    monkeypatch.chdir(here)
    result = run_audit(spec)
    assert sorted(p.name for p in marks.iterdir()) == []
    assert result["exit_code"] == 0, render(result, "en")


@pytest.fixture
def isolated() -> None:
    """bubblewrap must be able to isolate here (``.ci/run`` installs it)."""
    sandbox.isolation.cache_clear()
    why = sandbox.isolation()
    if why is not None:
        if os.environ.get("ATTNLAB_REQUIRE_SANDBOX"):
            pytest.fail(f"bubblewrap cannot isolate learner code here ({why})")
        pytest.skip(f"!!! SANDBOX TESTS SKIPPED: bubblewrap cannot isolate here ({why}) !!!")


SHM = """
wrote = 0
try:
    for n in range(5):  # 5 files of 40 MiB: each under the file-size cap
        with open(f"/dev/shm/attnlab-fill-{n}", "wb") as f:
            for _ in range(40):
                f.write(b"x" * 2**20)
                f.flush()
                wrote += 1
finally:
    print("SHM-MIB", wrote, flush=True)
"""


def test_memory_written_to_dev_shm_is_capped(tmp_path: Path, isolated: None) -> None:
    """200 MiB written to /dev/shm in 40 MiB files: bubblewrap's /dev/shm is a tmpfs of
    SHM_BYTES, so the writes stop there, the audit does not pass and the report names the cap."""
    result = run_audit(learner(tmp_path, init=SHM), timeout=60)
    printed = result["output"]["stdout"]["text"]
    wrote = int(printed.split("SHM-MIB")[1].split()[0])
    assert wrote <= sandbox.SHM_BYTES // 2**20, printed
    assert result["exit_code"] == 2, render(result, "en")
    assert "/dev/shm (64 MiB)" in result["error"]["en"], result["error"]


MEMFDS = """
import time
fds = []
for n in range(16):  # 16 x 60 MiB: each under the file-size cap, 960 MiB together
    fd = os.memfd_create(f"fill{n}")
    for _ in range(60):
        os.write(fd, b"x" * 2**20)
    fds.append(fd)
time.sleep(60)
"""


def test_memory_held_in_memfds_counts_against_the_trees_cap(tmp_path: Path, isolated: None) -> None:
    """960 MiB held in memfds (not resident memory of any process once written): with a
    768 MiB cap the audit stops and names the memory cap. (The keeper counts the files every
    process of the tree holds open the same way with bubblewrap or without: one mode.)"""
    result = run_audit(learner(tmp_path, init=MEMFDS), timeout=60, memory_mb=768)
    assert (result["exit_code"], result["where"]) == (2, "memory"), render(result, "en")
    assert "over the 768.0 MiB cap" in result["error"]["en"]


THREADS = """
import threading, time
started = 0
try:
    for _ in range(2048):
        threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
        started += 1
finally:
    print("THREADS", started, flush=True)
time.sleep(60)
"""


@pytest.mark.parametrize("how", ["bubblewrap", "user-namespace", "plain"])
def test_a_thread_flood_stops_at_the_task_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """2,048 threads asked for: the tree never holds more than TASKS (RLIMIT_NPROC in the
    sandbox, as root or as an unprivileged caller in a user namespace; the keeper's count in a
    plain process), and the audit stops and names the cap."""
    if how == "plain":
        monkeypatch.setenv(sandbox.SWITCH, "off")
    if how == "user-namespace":
        monkeypatch.setenv(sandbox.USERNS_SWITCH, "1")
    sandbox.isolation.cache_clear()
    try:
        result = run_audit(learner(tmp_path, init=THREADS), timeout=60)
    finally:
        sandbox.isolation.cache_clear()
    assert result["exit_code"] == 2, render(result, "en")
    said = result["error"]["en"]
    assert f"the cap is {sandbox.TASKS}" in said or f"cap of {sandbox.TASKS} processes" in said
    started = int(result["output"]["stdout"]["text"].split("THREADS")[1].split()[0])
    assert started < sandbox.TASKS, result["output"]


FILES = """
import tempfile
opened, big = [], "none"
try:
    for _ in range(5000):
        opened.append(open("/dev/null"))
except OSError as exc:
    print("OPEN-STOPPED", len(opened), exc.errno, flush=True)
for f in opened:
    f.close()
import signal
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write over the cap then fails with EFBIG
try:
    with open(os.path.join(tempfile.gettempdir(), "big"), "wb") as f:
        for _ in range(100):
            f.write(b"x" * 2**20)
            f.flush()
except OSError as exc:
    big = f"stopped {exc.errno}"
print("BIG", big, flush=True)
"""


def test_open_files_and_file_size_are_capped(tmp_path: Path, isolated: None) -> None:
    """5,000 open files stop at OPEN_FILES; a 100 MiB file stops at FILE_BYTES (EFBIG)."""
    import errno

    result = run_audit(learner(tmp_path, init=FILES), timeout=60)
    printed = result["output"]["stdout"]["text"]
    opened = int(printed.split("OPEN-STOPPED")[1].split()[0])
    assert opened < sandbox.OPEN_FILES, printed
    assert f"BIG stopped {errno.EFBIG}" in printed, printed


SECRET = """
try:
    print("SECRET", open({path!r}).read(), flush=True)
except OSError as exc:
    print("SECRET-DENIED", type(exc).__name__, flush=True)
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="the audit is started by root here only as root")
def test_a_root_only_file_is_unreadable_to_the_learners_code_when_root_audits(
    tmp_path: Path, isolated: None
) -> None:
    """Run as root, the learner's code is a real unprivileged uid: a 0640 root file (like
    /etc/shadow) under a bound folder cannot be read; a 0600 submitted file still audits."""
    secret = Path("/etc/attnlab-test-secret")
    secret.write_text("root only")
    secret.chmod(0o640)
    try:
        spec = learner(tmp_path, top=SECRET.format(path=str(secret)))
        Path(spec.rpartition(":")[0]).chmod(0o600)
        result = run_audit(spec, timeout=60)
    finally:
        secret.unlink()
    printed = result["output"]["stdout"]["text"]
    assert "SECRET-DENIED PermissionError" in printed, printed
    assert "root only" not in printed
    assert result["exit_code"] == 0, render(result, "en")


FORGED_SKELETON = """
_L = sys.modules["__main__"]  # the learner's process is python -m attnlab.audit.learner
if not hasattr(_L, "skeleton"):
    import attnlab.audit.learner as _L
_real = _L.skeleton
def _forged(module, path=None):
    entries = _real(module, path)
    for e in entries:
        if e["kind"] == "linear":
            e["config"]["in"] = e["config"]["out"] = 18000  # a 1.2 GiB layer, if it were built
    return entries
_L.skeleton = _forged
"""


def test_a_layer_description_the_judge_did_not_ask_for_is_refused(tmp_path: Path) -> None:
    """The learner's process says its layers are 18000 × 18000: the judge builds nothing of it,
    refuses in one line and exits 2."""
    result = run_audit(learner(tmp_path, top=FORGED_SKELETON), timeout=60)
    assert (result["exit_code"], result["where"]) == (2, "build"), render(result, "en")
    said = result["error"]["en"]
    assert "description of your module's layers was refused" in said, said
    assert "\\n" not in said


UNCHECKED = """
import attnlab.audit.observe as _observe
_observe.unusable = lambda out, x: None  # the learner's process no longer checks its output
"""


@pytest.mark.parametrize(
    ("returned", "said"),
    [
        ("out.to('meta')", "your module returned a tensor the audit cannot compare"),
        ("torch.zeros(out.size(0), out.size(1), 2**21)", "over the 64 MiB the audit reads"),
    ],
)
def test_the_judge_checks_the_output_itself(tmp_path: Path, returned: str, said: str) -> None:
    """A learner's process made to skip its own output check: the judge names a meta output
    and a reply over the pipe's limit (not a crash, not "the auditor failed"), exit 2."""
    result = run_audit(learner(tmp_path, top=UNCHECKED, out=returned), timeout=60)
    assert result["exit_code"] == 2, render(result, "en")
    assert said in result["error"]["en"], result["error"]


def test_an_unprivileged_callers_sandbox_audits_a_correct_head(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated: None
) -> None:
    """The path a learner's laptop takes (not root: a user namespace, uid 65534 in it), with
    /tmp and /dev/shm of their own and the folders made readable: a correct head passes."""
    monkeypatch.setenv(sandbox.USERNS_SWITCH, "1")
    result = run_audit(learner(tmp_path), timeout=60)
    assert result["exit_code"] == 0 and result["isolated"], render(result, "en")
