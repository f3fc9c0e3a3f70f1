"""The tier guard of ``tests/tiers.py``, in runs of its own (pytester, in this process): a test
that starts a process or listens on a socket without a tier marker fails before it does, one
with a marker is left alone, and ``--tier fast`` leaves the marked tests out."""

from __future__ import annotations

import pytest

SPAWNS = """
import socket, subprocess, sys
import pytest

def test_spawns_unmarked():
    subprocess.run([sys.executable, "-c", "pass"])

def test_listens_unmarked():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()

@pytest.mark.process
def test_spawns_marked():
    assert subprocess.run([sys.executable, "-c", "pass"]).returncode == 0

def test_stays_in_process():
    assert sum(range(4)) == 6

@pytest.mark.heavy
def test_heavy_stays_in_process():
    assert sum(range(4)) == 6

@pytest.mark.heavy
def test_heavy_spawns():
    subprocess.run([sys.executable, "-c", "pass"])
"""


def test_an_unmarked_process_or_server_fails_the_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_inner=SPAWNS)
    result = pytester.runpytest("-p", "tiers", "-k", "unmarked or in_process or heavy")
    # heavy leaves the fast tier for its cost, not to start processes: it may not spawn either
    result.assert_outcomes(passed=2, failed=3)
    assert "FAILED test_inner.py::test_heavy_spawns" in result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*this test started a process (fork_exec) but carries no tier marker*",
            "*this test started a server (a listening socket) but carries no tier marker*",
        ]
    )


def test_the_fast_tier_leaves_the_marked_tests_out(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_inner=SPAWNS)
    result = pytester.runpytest("-p", "tiers", "--tier", "fast", "-k", "marked or in_process")
    result.assert_outcomes(passed=1, failed=2, deselected=3)


def test_a_fixture_implies_its_tier(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_inner="""
import pytest

@pytest.fixture
def isolated():
    return None

def test_uses_the_sandbox(isolated, request):
    assert request.node.get_closest_marker("sandbox") is not None
"""
    )
    result = pytester.runpytest("-p", "tiers")
    result.assert_outcomes(passed=1)
    assert (
        pytester.runpytest("-p", "tiers", "--tier", "fast").ret
        == pytest.ExitCode.NO_TESTS_COLLECTED
    )
