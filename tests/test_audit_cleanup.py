"""``attnlab audit`` leaves nothing behind: no process the learner's code started, no temp
folder, no unbounded copy of what it printed, whatever way the audit ends (pass, FAIL, crash,
timeout, os._exit, an exception, SIGTERM or Ctrl-C sent to ``attnlab audit``).

The learner files in ``tests/zoo/rogue`` write the PIDs of the processes they leave behind to
``$ATTNLAB_TEST_PIDS``; ``TMPDIR`` points at an empty folder, so any temp folder left is seen.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

import psutil
import pytest

from attnlab import audit
from attnlab.audit import CAPTURE_BYTES, run_audit
from attnlab.audit.report import render

pytestmark = pytest.mark.sandbox

ROGUE = Path(__file__).parent / "zoo" / "rogue"
LEAVER = ROGUE / "leaves_processes.py"
#: What leaves_processes.py starts, plus the auditing process itself ("runner").
KINDS = {"fork", "popen", "new_session", "daemon", "runner"}
#: class -> (exit code, status, where, timeout): every way an audit can end.
ENDINGS = {
    "PassHead": (0, "ok", None, 20),
    "FailHead": (1, "ok", None, 20),
    "CrashHead": (2, "error", "crash", 20),
    "LoopHead": (2, "error", "timeout", 2),
    "SignalHead": (2, "error", "stopped", 20),
}
MIB = 2**20
PR_GET_CHILD_SUBREAPER = 37


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _pids(folder: Path) -> dict[str, int]:
    return {f.stem: int(f.read_text()) for f in folder.glob("*.pid") if f.read_text()}


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Path]]:
    """(pid folder, empty TMPDIR); afterwards kills whatever a failed test left running."""
    pids, tmp = tmp_path / "pids", tmp_path / "tmp"
    pids.mkdir()
    tmp.mkdir()
    monkeypatch.setenv("ATTNLAB_TEST_PIDS", str(pids))
    # The learner files here report their PIDs in a host folder: no bubblewrap, so these tests
    # hold the keeper's own clean-up to account (test_audit_sandbox.py tests the sandbox).
    monkeypatch.setenv("ATTNLAB_AUDIT_SANDBOX", "off")
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    yield pids, tmp
    for pid_file in pids.rglob("*.pid"):
        with contextlib.suppress(psutil.Error, ValueError):
            proc = psutil.Process(int(pid_file.read_text()))
            if any(m in " ".join(proc.cmdline()) for m in ("sleep(600)", "attnlab.audit.")):
                proc.kill()


def _subreaper_flag() -> int:
    flag = ctypes.c_int(-1)
    ctypes.CDLL(None, use_errno=True).prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0)
    return flag.value


def test_no_learner_process_outlives_the_audit(sandbox: tuple[Path, Path]) -> None:
    """Forked, Popen'd, new-session and double-forked children all die with the audit, and the
    report says how many were still running."""
    pids_dir, tmp = sandbox

    def one(name: str) -> dict[str, object]:
        return run_audit(f"{LEAVER}:{name}", timeout=ENDINGS[name][3])

    with ThreadPoolExecutor(max_workers=len(ENDINGS)) as pool:
        results = dict(zip(ENDINGS, pool.map(one, ENDINGS), strict=True))
    for name, (code, status, where, _) in ENDINGS.items():
        result = results[name]
        assert (result["exit_code"], result["status"]) == (code, status), (name, result)
        assert where is None or result["where"] == where, (name, result)
        pids = _pids(pids_dir / name)
        assert set(pids) == KINDS, (name, pids)  # the learner really started them
        assert [k for k, pid in pids.items() if _alive(pid)] == [], name
        if name != "SignalHead":  # stopped from inside: no report, only the clean-up
            assert result["stray_processes"] == len(KINDS) - 1, (name, result)
    assert list(tmp.iterdir()) == []
    # run_audit ran in this long-lived process: it must not have made it a subreaper.
    assert _subreaper_flag() == 0
    text = render(results["PassHead"], "en")
    assert "4 processes your code started were still running" in text, text
    assert "你的代码启动的 4 个进程" in render(results["FailHead"], "zh")
    stopped = results["SignalHead"]["error"]
    assert "the audit process was stopped by SIGTERM (did your code signal" in stopped["en"]
    assert "审计进程被 SIGTERM 中断" in stopped["zh"]


def _settles(check: Callable[[], bool], seconds: float = 30.0) -> bool:
    """Whether ``check()`` becomes true within ``seconds`` (a bounded wait, not a timing)."""
    for _ in range(int(seconds * 10)):
        if check():
            return True
        time.sleep(0.1)
    return check()


def _ran_or_ended(ready: Path, cli: subprocess.Popen[bytes]) -> bool:
    return ready.exists() or cli.poll() is not None


def _all_dead(pids: list[int]) -> bool:
    return not any(_alive(pid) for pid in pids)


def _empty(folder: Path) -> bool:
    return not list(folder.iterdir())


def test_signal_to_attnlab_audit_stops_everything(sandbox: tuple[Path, Path]) -> None:
    """SIGTERM to ``attnlab audit`` and Ctrl-C (SIGINT to its process group): one line on
    stderr, exit 128+signal, no learner process, no auditor process and no temp folder left.
    SIGKILL gives no chance to say anything, but the clean-up still happens."""
    pids_dir, tmp = sandbox
    cases = {signal.SIGTERM: "TERM", signal.SIGINT: "INT", signal.SIGKILL: "KILL"}
    clis = {}
    for sig, case in cases.items():
        lang = "zh" if sig == signal.SIGINT else "en"
        cmd = ["-m", "attnlab", "--lang", lang, "audit", f"{LEAVER}:LoopHead", "--timeout", "300"]
        (tmp / case).mkdir()
        env = {**os.environ, "ATTNLAB_TEST_PIDS": str(pids_dir / case), "TMPDIR": str(tmp / case)}
        clis[sig] = subprocess.Popen(
            [sys.executable, *cmd],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,  # its own process group, as a shell gives a job
        )
    try:
        for sig, case in cases.items():
            ready = pids_dir / case / "LoopHead" / "runner.pid"  # the learner's last PID file
            assert _settles(partial(_ran_or_ended, ready, clis[sig]), 120)
            assert ready.exists(), clis[sig].communicate()
        helpers = {
            sig: psutil.Process(cli.pid).children(recursive=True) for sig, cli in clis.items()
        }
        clis[signal.SIGTERM].send_signal(signal.SIGTERM)
        os.killpg(clis[signal.SIGINT].pid, signal.SIGINT)  # what Ctrl-C in a terminal does
        clis[signal.SIGKILL].kill()
        for sig, case in cases.items():
            _, err = clis[sig].communicate(timeout=60)
            text = err.decode()
            pids = _pids(pids_dir / case / "LoopHead")
            assert set(pids) == KINDS, pids
            every = [*pids.values(), *(p.pid for p in helpers[sig])]
            wait = 30 if sig == signal.SIGKILL else 0  # the others have cleaned up before exiting
            assert _settles(partial(_all_dead, every), wait), (sig, pids)
            assert _settles(partial(_empty, tmp / case), wait), list((tmp / case).iterdir())
            if sig == signal.SIGKILL:
                continue
            assert clis[sig].returncode == 128 + sig, (sig, text)
            assert len(text.strip().splitlines()) == 1 and "Traceback" not in text, text
            expected = {
                signal.SIGTERM: "audit stopped by SIGTERM; every process it started was killed",
                signal.SIGINT: "审计被 SIGINT 中断；它启动的进程都已结束，临时文件夹已删除",
            }
            assert expected[sig] in text, text
    finally:
        for cli in clis.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(cli.pid, signal.SIGKILL)
            cli.communicate()


def test_learner_output_is_capped_not_stored(
    sandbox: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """56 MiB of prints: the audit still passes; 1 MiB of each stream is kept (its start and
    its end), the rest is counted; nothing grows in the temp folder. A flood before a crash
    still gives the crash's last words, escaped. Chinese prints survive an ASCII terminal."""
    pids_dir, tmp = sandbox
    monkeypatch.setenv("PYTHONIOENCODING", "ascii")
    flood = f"{ROGUE / 'floods_output.py'}"
    # 56 MiB of prints take the learner's process seconds of CPU; on a 2-core machine busy with
    # other tests that can pass the default 20 s limit, which is not what is tested here.
    audit_flood = partial(run_audit, timeout=120)
    with ThreadPoolExecutor(max_workers=2) as pool:
        result, died = pool.map(audit_flood, [f"{flood}:FloodHead", f"{flood}:FloodExit"])
    assert result["exit_code"] == 0, result
    used = int((pids_dir / "FloodHead" / "tempdir_bytes").read_text())
    assert used < 64 * 1024, f"the temp folder held {used} bytes while the learner printed"
    output = result["output"]
    assert isinstance(output, dict)
    for stream, printed in (("stdout", 32 * MIB), ("stderr", 24 * MIB)):
        kept = output[stream]
        assert kept["bytes"] >= printed and kept["dropped"] >= printed - CAPTURE_BYTES, kept
        assert "flood-start\n" in kept["text"][:4096], kept["text"][:200]
        assert kept["text"].endswith("flood-end\n"), kept["text"][-40:]
        assert len(kept["text"].encode()) <= CAPTURE_BYTES + 100
    assert "flood-start\n你好，注意力\n" in output["stdout"]["text"][:4096]
    text = render(result, "en")
    assert "result: 0 FAIL" in text
    assert "your code printed 56.0 MiB; only 2.0 MiB of it was kept" in text, text
    assert "你的代码输出了 56.0 MiB，只保留了 2.0 MiB" in render(result, "zh")
    assert (died["where"], died["exit_code"]) == ("exit", 2), died
    assert died["error"]["en"].endswith("(os._exit or a crash?) \\x1b[2Jlast words"), died
    assert "\x1b" not in render(died, "en") and "\x1b" not in render(died, "zh")
    assert "your code printed 8.0 MiB; only 1.0 MiB of it was kept" in render(died, "en")
    assert list(tmp.iterdir()) == []


@pytest.mark.parametrize(
    ("script", "message"),
    [
        ("import sys; sys.exit(3)", "the auditor failed: the keeper exited with code 3"),
        ('print(\'{"error": "boom"}\')', "the auditor failed: boom"),
        ("print('{\"ready\": tr', end='')", "the auditor failed: the keeper exited with code 0"),
        ("import time; time.sleep(60)", "the auditor failed: the keeper process did not finish"),
    ],
)
def test_a_failing_keeper_gives_one_line(
    script: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If the keeper itself dies, says it failed, or hangs, the result says so (and a hung
    keeper is stopped)."""
    keeper = tmp_path / "keeper.py"
    keeper.write_text(f"import os; open({str(tmp_path / 'pid')!r}, 'w').write(str(os.getpid()))\n")
    keeper.write_text(keeper.read_text() + script + "\n")
    monkeypatch.setattr(audit, "KEEPER", keeper)
    monkeypatch.setattr(audit, "STARTUP_LIMIT", 0.0)
    # The hung keeper is waited for 1 s past its limits; a keeper that ends by itself gets a
    # minute, so a busy machine's slow start never reads as a hang.
    monkeypatch.setattr(audit, "KEEPER_GRACE", 1.0 if "sleep" in script else 60.0)
    result = run_audit(f"{LEAVER}:PassHead", timeout=1)
    assert (result["status"], result["where"], result["exit_code"]) == ("error", "audit", 2)
    assert message in result["error"]["en"], result["error"]
    assert "审计器内部错误" in result["error"]["zh"]
    assert not _alive(int((tmp_path / "pid").read_text()))


def test_the_learners_clock_starts_after_its_imports() -> None:
    """On a busy machine the learner's process may take seconds to import torch: that wait is
    not the learner's code being slow, so it never counts against ``--timeout``."""
    import threading

    from attnlab.audit import wire
    from attnlab.audit.remote import Learner, LearnerGone

    requests_r, requests_w = os.pipe()
    replies_r, replies_w = os.pipe()

    def slow_start() -> None:
        time.sleep(1.0)  # "importing torch", longer than the learner's whole budget
        wire.send(replies_w, wire.HELLO)
        wire.receive(requests_r)
        wire.send(replies_w, {"ok": True})

    helper = threading.Thread(target=slow_start)
    helper.start()
    learner = Learner(requests_w, replies_r, budget=0.5)
    learner.wait_ready(30)
    assert learner.ask("load")["ok"] is True
    helper.join()
    assert 0 < learner.budget <= 0.5  # only the answer's wait was counted
    # A process that dies before its greeting is gone, not slow.
    os.close(replies_w)
    with pytest.raises(LearnerGone):
        Learner(requests_w, replies_r, budget=0.5).wait_ready(30)
    for fd in (requests_r, requests_w, replies_r):
        os.close(fd)


@pytest.mark.parametrize("size", [20, 200_000])
def test_the_judges_result_is_read_when_it_exits_between_two_looks(size: int) -> None:
    """The judge may write its result and exit before the keeper has read a byte of it (a
    busy machine): the result is read to its end, not taken as "the judge wrote nothing"."""
    from attnlab.audit.keeper import RESULT_BYTES, judge_result
    from attnlab.audit.processes import Capture

    said = {"status": "ok", "pad": "x" * size}
    code = (
        f"import json, sys; sys.stdout.write(json.dumps({{'status': 'ok', 'pad': 'x' * {size}}}))"
    )
    judge = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert judge.stdout and judge.stderr
    out, err = judge.stdout.fileno(), judge.stderr.fileno()
    captures = {out: Capture(RESULT_BYTES, 0), err: Capture()}
    if size < 4096:
        judge.wait()  # written and gone; nothing of it read yet
    else:  # more than a pipe holds: some of it read already, the rest still in the pipe
        captures[out].add(os.read(out, 4096))
    assert judge_result(captures, out, err) == said
    judge.wait()
    judge.stdout.close()
    judge.stderr.close()
