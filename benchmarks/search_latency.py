"""Search latency over the whole lesson: p50 and p95 per query, against the 50 ms bar.

Opens a progress store in a temporary folder (with a few notes), builds the index once (the
first search of a new attnlab does that), then times ``attnlab.content.search.search`` in a
warm process over Chinese words of 1-4 characters, English terms and multi-word queries, both
page languages.

    python benchmarks/search_latency.py [--repeat 30]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

from attnlab.content import search
from attnlab.progress.store import ProgressStore

QUERIES = ("掩", "掩码", "缩放", "多头", "梯度", "自注意", "因果掩码", "W", "W_O", "d_k",
           "softmax", "SOFTMAX", "causal mask", "raw score", "multi-head", "zebra",
           "\"causal mask\"", "causal-mask", "mask*", "a")  # fmt: skip
BAR_MS = 50.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, ProgressStore.open(folder) as store:
        for section in range(20):
            store.add_note(section, f"my note on section {section}: mask, softmax, 缩放")
        start = time.perf_counter()
        search.search(store, "mask", "en")
        print(f"first search (corpus built, index written): {time.perf_counter() - start:.3f} s")
        samples: list[float] = []
        for _ in range(args.repeat):
            for query in QUERIES:
                for lang in ("zh", "en"):
                    t0 = time.perf_counter()
                    search.search(store, query, lang)
                    samples.append((time.perf_counter() - t0) * 1000)
    samples.sort()
    p50 = statistics.median(samples)
    p95 = samples[int(0.95 * (len(samples) - 1))]
    verdict = "ok" if p95 < BAR_MS else "OVER"
    print(f"{len(samples)} queries: p50 {p50:.2f} ms, p95 {p95:.2f} ms, max {samples[-1]:.2f} ms "
          f"(bar {BAR_MS:g} ms: {verdict})")  # fmt: skip
    return 0 if p95 < BAR_MS else 1


if __name__ == "__main__":
    raise SystemExit(main())
