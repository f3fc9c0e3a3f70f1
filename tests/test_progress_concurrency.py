"""Several processes writing progress at once: no lost write, no corrupted file (on SQLite and on
PostgreSQL, tests/store_backends.py)."""

from __future__ import annotations

import multiprocessing as mp
import sqlite3
from pathlib import Path

import pytest

from attnlab.progress.store import ProgressStore

WRITERS = 4
ATTEMPTS_EACH = 20


def _where(location: str) -> Path | str:
    # A URL stays a URL; anything else is the SQLite file's path.
    return location if location.startswith("postgresql://") else Path(location)


def _writer(path: str, worker: int, start: object) -> None:
    start.wait()  # type: ignore[attr-defined]  # every process opens the (new) file at once
    with ProgressStore(_where(path)) as store:
        for i in range(ATTEMPTS_EACH):
            store.record_attempt("9c", f"w{worker}-{i}", i % 2 == 0)
            store.set_assessment(i % 20, "review" if (worker + i) % 2 else "understood")
            store.set_last_section(worker)
        store.mark_complete(worker)
        store.mark_complete(19)  # every writer completes the same section too


def _importer(path: str, start: object) -> None:
    start.wait()  # type: ignore[attr-defined]
    data = {
        "format": "attnlab-progress", "version": 1, "profile": "default",
        "exported_at": "2026-11-29T10:00:00+00:00",
        "completed": [{"section": 10, "at": "2026-11-29T10:00:00+00:00"}],
        "assessments": [],
        "attempts": [{"exercise": "4c", "answer": f"imported-{i}", "correct": True,
                      "diagnosis": None, "at": "2026-11-29T10:00:00+00:00"} for i in range(10)],
        "last_section": None,
    }  # fmt: skip
    with ProgressStore(_where(path)) as store:
        for _ in range(5):
            store.import_dict(data)


@pytest.mark.process
def test_concurrent_writers_lose_nothing(store_location: Path | str) -> None:
    path = store_location
    ctx = mp.get_context("fork")  # the children need no torch; fork avoids re-importing it
    start = ctx.Barrier(WRITERS + 1)
    procs = [ctx.Process(target=_writer, args=(str(path), w, start)) for w in range(WRITERS)]
    procs.append(ctx.Process(target=_importer, args=(str(path), start)))
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=60)
    codes = [p.exitcode for p in procs]
    assert codes == [0] * len(procs), f"writer exit codes {codes}"

    if isinstance(path, Path):
        conn = sqlite3.connect(path)
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        conn.close()
    with ProgressStore(path) as store:
        answers = [a["answer"] for a in store.attempts()]
        summary = store.summary()
    expected = {f"w{w}-{i}" for w in range(WRITERS) for i in range(ATTEMPTS_EACH)}
    assert expected <= set(answers), f"lost writes: {sorted(expected - set(answers))[:5]}"
    assert len(answers) == len(expected) + 10, "imports duplicated or lost attempts"
    assert set(summary.completed) == {*range(WRITERS), 10, 19}
    assert len(summary.assessments) == 20
    assert summary.last_section in range(WRITERS)


def test_threads_sharing_one_store(store_location: Path | str) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ProgressStore(store_location) as store:

        def work(i: int) -> None:
            store.record_attempt("5c", f"t{i}", True)
            store.set_assessment(i % 20, "review")
            assert store.summary().attempts >= 1

        with ThreadPoolExecutor(max_workers=4) as pool:
            list(pool.map(work, range(40)))
        assert sorted(a["answer"] for a in store.attempts()) == sorted(f"t{i}" for i in range(40))
