"""``attnlab bench --busy``: the competing process starts, and stops whatever happens."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time

import psutil
import pytest
from typer.testing import CliRunner

from attnlab.bench import TINY, runner
from attnlab.bench.busy import competing_process
from attnlab.cli.main import app

pytestmark = pytest.mark.process


def _children(before: frozenset[int] = frozenset()) -> list[tuple[int, str]]:
    """(pid, command line) of this process's children, but those in ``before``: a worker may
    hold others of its own (the browser session's Playwright driver and Chromium)."""
    found = []
    for child in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if child.pid not in before:
                found.append((child.pid, " ".join(child.cmdline())))
    return found


def _already() -> frozenset[int]:
    """The children this process has before a test starts any."""
    return frozenset(pid for pid, _ in _children())


def _gone(pid: int, timeout: float = 120.0) -> bool:
    """True once ``pid`` has exited (reaped, or a zombie waiting for a parent that is not us)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def spy_run(monkeypatch):
    """Replace the measurements with ``then()``, after noting the children alive at that point."""
    seen: list[list[tuple[int, str]]] = []
    before = _already()

    def install(then):
        def run_all(config, on_step):
            seen.append(_children(before))
            return then(config, on_step)

        monkeypatch.setattr(runner, "_run_all", run_all)
        return seen

    return install


def _raise(error: BaseException):
    def then(config, on_step):
        raise error

    return then


def _sigterm(config, on_step):
    # signal handlers live in the main thread; anywhere else SIGTERM would end the test run
    assert threading.current_thread() is threading.main_thread()
    os.kill(os.getpid(), signal.SIGTERM)
    # The handler runs at the next bytecode, in this thread, and raises out of the sleep; the
    # sleep is only a bound that is never reached.
    time.sleep(120)
    raise AssertionError("SIGTERM did not interrupt the run")


@pytest.mark.parametrize(
    ("then", "error"),
    [
        (_raise(RuntimeError("measurement failed")), RuntimeError),
        (_raise(KeyboardInterrupt()), KeyboardInterrupt),
        (_sigterm, SystemExit),
    ],
    ids=["failure", "ctrl-c", "sigterm"],
)
def test_busy_child_runs_during_the_bench_and_is_stopped_when_it_fails(spy_run, then, error):
    before = signal.getsignal(signal.SIGTERM)
    seen = spy_run(then)
    with pytest.raises(error):
        runner.run_bench(TINY, busy=True)
    (during,) = seen
    spinners = [pid for pid, command in during if "while time.monotonic()" in command]
    assert len(spinners) == 1, during
    assert _gone(spinners[0]), f"competitor {spinners[0]} still running"
    assert signal.getsignal(signal.SIGTERM) is before


def test_no_child_without_busy(spy_run) -> None:
    seen = spy_run(lambda config, on_step: "result")
    assert runner.run_bench(TINY) == "result"
    assert seen == [[]]


def test_busy_command_reports_the_contention_and_stops_its_child(monkeypatch, tmp_path) -> None:
    original = runner.plan
    monkeypatch.setattr(runner, "plan", lambda config: original(config)[:4])  # the bar section
    # Nor the RSS table: five fresh processes that import torch, whose numbers a busy core does
    # not change and this test does not read (test_flash_bench's tiny run checks that table).
    monkeypatch.setattr(runner, "memory_rows", lambda shape, repeats, on_step: [])
    seen: list[list[tuple[int, str]]] = []
    original_run = runner._run_all
    before = _already()

    def run_all(config, on_step):
        seen.append(_children(before))
        return original_run(config, on_step)

    monkeypatch.setattr(runner, "_run_all", run_all)
    csv, md = tmp_path / "b.csv", tmp_path / "b.md"
    args = ["--lang", "en", "bench", "--tiny", "--busy", "--csv", str(csv), "--markdown", str(md)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "under contention: one busy-looping process" in result.output
    (during,) = seen
    assert len(during) == 1 and _gone(during[0][0]), during
    text = md.read_text(encoding="utf-8")
    assert text.startswith("# Tiled attention against SDPA: next to one busy process")
    assert f"`attnlab --lang en bench --tiny --busy --csv {csv} --markdown {md}`" in text
    assert "CausalSelfAttention(8, 2, 24) tiled / sdpa, forward, one busy process |" in text
    assert "| ≤ 1.5 |" in text and "| layer | CausalSelfAttention(tiled) |" in text


def test_competitor_stops_at_its_limit() -> None:
    with competing_process(limit_seconds=0.5) as competitor:
        assert _gone(competitor.pid), "the competitor outlived its limit"
    assert competitor.stopped_early


def test_competitor_stops_when_its_parent_is_killed() -> None:
    parent = (
        "import os, sys\n"
        "from attnlab.bench.busy import competing_process\n"
        "competitor = competing_process(600).__enter__()\n"
        "print(competitor.pid, flush=True)\n"
        "os._exit(0)  # no clean-up at all, as after SIGKILL\n"
    )
    out = subprocess.run([sys.executable, "-c", parent], capture_output=True, text=True, timeout=60)
    pid = int(out.stdout)
    assert _gone(pid), f"competitor {pid} outlived its parent"


def test_competitor_needs_a_positive_limit() -> None:
    with pytest.raises(ValueError, match="limit_seconds must be positive, got 0"):
        competing_process(0).__enter__()


def test_markdown_in_a_missing_directory_is_refused_before_running(tmp_path) -> None:
    target = tmp_path / "nowhere" / "b.md"
    args = [
        "bench",
        "--tiny",
        "--busy",
        "--csv",
        str(tmp_path / "b.csv"),
        "--markdown",
        str(target),
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert f"--markdown: directory {target.parent} does not exist" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "b.csv").exists()
