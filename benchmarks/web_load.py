"""Load test of the web lesson: N concurrent clients on loopback, from a cold start.

Starts ``attnlab serve`` in a subprocess on a free port with a temporary progress folder and,
as soon as it answers ``/healthz`` (no warm-up request), runs ``--clients`` asyncio clients
(aiohttp: its client costs the shared CPUs less than httpx's) for ``--seconds``. Each
client cycles through the kinds of ``--mix``:

* ``lesson``: the whole lesson page (checked: it holds the last section);
* ``section``: one section page, ``/section/N``, a different N each time;
* ``explorer``: an explorer update (``POST /api/explorer`` with an edited W_Q);
* ``write``: a knowledge-check answer (a progress write with a unique text); at the end the
  answers in the SQLite file are counted and compared with the writes the server confirmed.

Prints p50/p95/p99 latency per kind and over all requests, the bytes received, the errors, and
the bar (no error, and p95 <= 100 ms with ``--think``, >= 500 requests/s back to back); exits 1
when it is missed. Before/after comparisons:

    .venv/bin/python benchmarks/web_load.py                        # 50 clients, 10 s
    .venv/bin/python benchmarks/web_load.py --no-gzip              # clients do not ask for gzip
    .venv/bin/python benchmarks/web_load.py --src /tmp/before/src  # another checkout's server
    .venv/bin/python benchmarks/web_load.py --mix lesson,explorer,write --seconds 30
    .venv/bin/python benchmarks/web_load.py --think 500             # learners pause ~0.5 s

Back to back (the default) every client sends its next request the moment an answer arrives: a
stress test that measures throughput (latency ≈ clients / requests per second). ``--think`` adds
the pause a learner takes to read or type, which is what a classroom sends.

``--src`` puts that folder first on ``PYTHONPATH`` (``git archive main | tar -x -C /tmp/before``).
The server's figure cache lives in a fresh temporary folder unless ``--figure-cache`` names one
(``make`` fills the real one at install; a fresh folder makes the server draw them at start-up).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import httpx
import psutil

from attnlab.core import example
from attnlab.progress.store import ProgressStore

KINDS = ("lesson", "section", "explorer", "write")
BAR_P95_MS = 100.0  # learners who pause (--think): the slowest 5 % of answers
BAR_RPS = 500.0  # clients back to back: requests answered per second


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _payload(i: int) -> dict[str, object]:
    w_q = example.lesson_w_q().tolist()
    w_q[1][0] = 1.0 + (i % 9973) / 9973  # a different edit each time, like a learner typing
    return {
        "x": example.lesson_x().tolist(),
        "w_q": w_q,
        "w_k": example.lesson_w_k().tolist(),
        "w_v": example.lesson_w_v().tolist(),
    }


class Tally:
    def __init__(self) -> None:
        self.latency: dict[str, list[float]] = {kind: [] for kind in KINDS}
        self.errors: list[str] = []
        self.writes = 0
        self.bytes = 0
        # CPU seconds spent during the run (postgres: the database server's processes)
        self.cpu = {"server": 0.0, "clients": 0.0, "postgres": 0.0}


async def _one(
    client: aiohttp.ClientSession, origin: str, kind: str, n: int, i: int, tally: Tally
) -> bool:
    token_value = next((c.value for c in client.cookie_jar if c.key == "attnlab_csrf"), "")
    if kind == "lesson":
        async with client.get("/lesson") as r:
            body = await r.read()
            ok = r.status == 200 and b'id="s-19"' in body
    elif kind == "section":
        async with client.get(f"/section/{(n + i) % example.SECTION_COUNT}") as r:
            body = await r.read()
            ok = r.status == 200
    elif kind == "explorer":
        headers = {"Origin": origin, "X-CSRF-Token": token_value}
        payload = _payload(n * 100_000 + i)  # no two requests alike
        async with client.post("/api/explorer", json=payload, headers=headers) as r:
            ok = r.status == 200 and "weights" in (await r.json())["stages"]
    else:
        data = {"csrf_token": token_value, "answer": f"load-{n}-{i}"}
        section = f"/section/{i % example.SECTION_COUNT}/answer"
        async with client.post(
            section, data=data, headers={"Origin": origin}, allow_redirects=False
        ) as r:
            await r.read()
            ok = r.status == 303
        tally.writes += ok
    tally.bytes += int(r.headers.get("Content-Length", 0))  # as sent (gzipped when asked)
    if not ok:
        tally.errors.append(f"{kind}: HTTP {r.status}")
    return ok


async def _client(
    n: int, base: str, deadline: float, args: argparse.Namespace, tally: Tally
) -> None:
    mix = args.mix.split(",")
    headers = {"Accept-Encoding": "identity" if args.no_gzip else "gzip"}
    pause = random.Random(n)  # each learner's own reading pauses, the same in every run
    jar = aiohttp.CookieJar(unsafe=True)  # keep cookies set by 127.0.0.1 (an IP address)
    timeout = aiohttp.ClientTimeout(total=60)
    async with aiohttp.ClientSession(
        base, headers=headers, cookie_jar=jar, timeout=timeout
    ) as client:
        async with client.get("/healthz") as r:  # the session cookie (CSRF token); not timed
            await r.read()
        i = 0
        while time.monotonic() < deadline:
            if args.think > 0:  # a learner reads (or types) between requests
                await asyncio.sleep(pause.uniform(0, 2 * args.think / 1000))
            kind = mix[i % len(mix)]
            start = time.perf_counter()
            try:
                await _one(client, base, kind, n, i, tally)
            except Exception as exc:  # a broken answer (not JSON, no stages) counts, too
                tally.errors.append(f"{kind}: {type(exc).__name__}: {exc}")
            tally.latency[kind].append(time.perf_counter() - start)
            i += 1


def _pct(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100)[q - 1] * 1000 if len(values) > 1 else 0.0


def _cpu(proc: psutil.Process) -> float:
    """CPU seconds of ``proc`` and of its living worker processes."""
    total = 0.0
    for p in [proc, *proc.children(recursive=True)]:
        try:
            times = p.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


def _postgres_cpu() -> float:
    """CPU seconds of this machine's PostgreSQL server processes (0 when none runs here)."""
    total = 0.0
    for p in psutil.process_iter(["name", "cpu_times"]):
        times = p.info["cpu_times"]
        if p.info["name"] in ("postgres", "postmaster") and times is not None:
            total += times.user + times.system
    return total


def _wait_ready(base: str, proc: subprocess.Popen[bytes]) -> float:
    """Seconds until the server answers ``/healthz`` (its start-up, figures included)."""
    start = time.perf_counter()
    for _ in range(1200):
        if proc.poll() is not None:
            sys.exit(f"server exited with code {proc.returncode}")
        try:
            if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                return time.perf_counter() - start
        except httpx.HTTPError:
            time.sleep(0.1)
    sys.exit("server did not start")


def _server(args: argparse.Namespace, port: int, data_dir: Path) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    if args.src is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(args.src.resolve()), env.get("PYTHONPATH", "")])
    cache = args.figure_cache or Path(tempfile.mkdtemp(prefix="attnlab-load-cache-"))
    env["ATTNLAB_CACHE_DIR"] = str(cache)
    cmd = [sys.executable, "-m", "attnlab", "serve", "--port", str(port)]
    cmd += ["--data-dir", str(data_dir)]
    if args.workers is not None:  # else serve's default: one worker per core
        cmd += ["--workers", str(args.workers)]
    if args.db is not None:
        cmd += ["--db", args.db]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, env=env)


def _report(args: argparse.Namespace, tally: Tally, start_s: float) -> bool:
    every = [v for values in tally.latency.values() for v in values]
    print(f"{args.clients} clients, {args.seconds:g} s on loopback, {os.cpu_count()} CPUs, "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")  # fmt: skip
    gzip = "no" if args.no_gzip else "yes"
    think = f"{args.think:g} ms on average" if args.think > 0 else "none (back to back)"
    print(f"  store: {'PostgreSQL' if args.db else 'SQLite'}")
    print(f"  server start-up {start_s:.1f} s; gzip asked: {gzip}; {tally.bytes / 2**20:.1f} MiB")
    workers = "serve's default" if args.workers is None else args.workers
    total = sum(len(v) for v in tally.latency.values())
    print(f"  workers: {workers}; {total / args.seconds:.0f} requests/s")
    print(f"  pause between a client's requests: {think}")
    for kind, values in [*tally.latency.items(), ("all", every)]:
        if values:
            print(f"  {kind:9s} n={len(values):5d}  p50={_pct(values, 50):7.1f} ms  "
                  f"p95={_pct(values, 95):7.1f} ms  p99={_pct(values, 99):7.1f} ms")  # fmt: skip
    # The clients run on the same CPUs: when they use most of one, they are part of the latency.
    pg = f", postgres {tally.cpu['postgres']:.1f}" if args.db else ""
    print(f"  CPU seconds in the run: server {tally.cpu['server']:.1f}, "
          f"clients {tally.cpu['clients']:.1f}{pg}")  # fmt: skip
    if total:
        per = (tally.cpu["server"] + tally.cpu["postgres"]) * 1000 / total
        print(f"  server CPU per request: {per:.2f} ms (attnlab{' + postgres' if args.db else ''})")
    print(f"  errors: {len(tally.errors)}")
    for line in tally.errors[:5]:
        print("   ", line)
    if args.think > 0:
        ok = not tally.errors and _pct(every, 95) <= BAR_P95_MS
        print(f"bar: p95 <= {BAR_P95_MS:g} ms and no error: {'ok' if ok else 'MISSED'}")
    else:
        ok = not tally.errors and total / args.seconds >= BAR_RPS
        print(f"bar: >= {BAR_RPS:g} requests/s and no error: {'ok' if ok else 'MISSED'}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--mix", default="lesson,section,explorer", help="kinds, comma-separated")
    parser.add_argument("--no-gzip", action="store_true", help="ask for uncompressed pages")
    parser.add_argument("--src", type=Path, help="serve the attnlab found in this folder")
    parser.add_argument("--figure-cache", type=Path, help="the server's figure cache folder")
    parser.add_argument("--workers", type=int, help="serve --workers N (default: serve's own)")
    parser.add_argument(
        "--db",
        help="serve --db URL: a PostgreSQL database (an empty schema: the writes are counted "
        "there); default: a SQLite file in a fresh folder",
    )
    parser.add_argument(
        "--think",
        type=float,
        default=0.0,
        help="mean pause in ms between one client's requests (uniform in [0, 2*think]); "
        "0 = back to back, a stress test where latency is clients / throughput",
    )
    args = parser.parse_args()
    mix = args.mix.split(",")
    if not mix or set(mix) - set(KINDS):
        parser.error(f"--mix: expected kinds among {', '.join(KINDS)}, got {args.mix!r}")
    data_dir = Path(tempfile.mkdtemp(prefix="attnlab-load-"))
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    proc = _server(args, port, data_dir)
    tally = Tally()
    try:
        start_s = _wait_ready(base, proc)
        server_cpu, clients_cpu = _cpu(psutil.Process(proc.pid)), time.process_time()
        postgres_cpu = _postgres_cpu()
        deadline = time.monotonic() + args.seconds

        async def run_all() -> None:
            clients = (_client(n, base, deadline, args, tally) for n in range(args.clients))
            await asyncio.gather(*clients)

        asyncio.run(run_all())
        tally.cpu["server"] = _cpu(psutil.Process(proc.pid)) - server_cpu
        tally.cpu["clients"] = time.process_time() - clients_cpu
        tally.cpu["postgres"] = _postgres_cpu() - postgres_cpu
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    ok = _report(args, tally, start_s)
    if "write" in mix:
        with ProgressStore.open(data_dir, db=args.db) as store:
            rows = sum(1 for a in store.attempts() if a["answer"].startswith("load-"))
        print(f"  confirmed writes: {tally.writes}  rows in store: {rows}")
        ok = ok and rows == tally.writes
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
