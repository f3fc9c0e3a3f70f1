"""Load test of the web lesson: N concurrent clients on loopback for a fixed time.

Starts ``attnlab serve`` in a subprocess on a free port with a temporary progress folder, then
runs ``--clients`` asyncio clients (httpx) for ``--seconds``. Each client opens the lesson once
(for its session cookie), then cycles through: read the whole lesson page, send an explorer
update, save a knowledge-check answer (a progress write with a unique text). At the end it
counts the answers in the SQLite file and compares them with the writes the server confirmed.

    .venv/bin/python benchmarks/web_load.py --clients 50 --seconds 30

Prints p50/p95 latency per request kind, errors, and confirmed writes vs rows; exits 1 on any
error or lost write.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from attnlab import example
from attnlab.learn.store import ProgressStore


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _payload(i: int) -> dict[str, object]:
    w_q = example.lesson_w_q().tolist()
    w_q[1][0] = 1.0 + (i % 7) / 10  # a different edit each time, like a learner typing
    return {
        "x": example.lesson_x().tolist(),
        "w_q": w_q,
        "w_k": example.lesson_w_k().tolist(),
        "w_v": example.lesson_w_v().tolist(),
    }


class Tally:
    def __init__(self) -> None:
        self.latency: dict[str, list[float]] = {"lesson": [], "explorer": [], "write": []}
        self.errors: list[str] = []
        self.writes = 0


async def _client(n: int, base: str, deadline: float, tally: Tally) -> None:
    async with httpx.AsyncClient(base_url=base, timeout=60) as client:
        await client.get("/lesson")
        token = client.cookies["attnlab_csrf"]
        headers = {"Origin": base, "X-CSRF-Token": token}
        i = 0
        while time.monotonic() < deadline:
            kind = ("lesson", "explorer", "write")[i % 3]
            start = time.perf_counter()
            try:
                if kind == "lesson":
                    r = await client.get("/lesson")
                    ok = r.status_code == 200 and 'id="s-19"' in r.text
                elif kind == "explorer":
                    r = await client.post("/api/explorer", json=_payload(i), headers=headers)
                    ok = r.status_code == 200 and "weights" in r.json()["stages"]
                else:
                    data = {"csrf_token": token, "answer": f"load-{n}-{i}"}
                    r = await client.post(
                        f"/section/{i % 20}/answer", data=data, headers={"Origin": base}
                    )
                    ok = r.status_code == 303
                    tally.writes += ok
            except httpx.HTTPError as exc:
                ok, r = False, None
                tally.errors.append(f"{kind}: {type(exc).__name__}: {exc}")
            tally.latency[kind].append(time.perf_counter() - start)
            if not ok and r is not None:
                tally.errors.append(f"{kind}: HTTP {r.status_code}")
            i += 1


def _pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] * 1000 if len(values) > 1 else 0.0


def _wait_ready(base: str, proc: subprocess.Popen[bytes]) -> None:
    for _ in range(300):
        if proc.poll() is not None:
            sys.exit(f"server exited with code {proc.returncode}")
        try:
            if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                httpx.get(base + "/lesson", timeout=120)  # draws the figures once
                return
        except httpx.HTTPError:
            time.sleep(0.2)
    sys.exit("server did not start")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=30.0)
    args = parser.parse_args()
    data_dir = Path(tempfile.mkdtemp(prefix="attnlab-load-"))
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    cmd = [
        sys.executable,
        "-m",
        "attnlab",
        "serve",
        "--port",
        str(port),
        "--data-dir",
        str(data_dir),
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, env={**os.environ})
    try:
        _wait_ready(base, proc)
        tally = Tally()
        deadline = time.monotonic() + args.seconds

        async def run_all() -> None:
            await asyncio.gather(*(_client(n, base, deadline, tally) for n in range(args.clients)))

        asyncio.run(run_all())
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    with ProgressStore.open(data_dir) as store:
        rows = sum(1 for a in store.attempts() if a["answer"].startswith("load-"))
    print(f"{args.clients} clients, {args.seconds:.0f} s on loopback ({os.cpu_count()} CPUs)")
    for kind, values in tally.latency.items():
        print(
            f"  {kind:9s} n={len(values):5d}  p50={_pct(values, 50):7.1f} ms  "
            f"p95={_pct(values, 95):7.1f} ms"
        )
    print(f"  errors: {len(tally.errors)}  confirmed writes: {tally.writes}  rows in store: {rows}")
    for line in tally.errors[:5]:
        print("   ", line)
    return 0 if not tally.errors and rows == tally.writes else 1


if __name__ == "__main__":
    sys.exit(main())
