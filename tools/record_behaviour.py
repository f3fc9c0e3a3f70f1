"""Record what a learner sees, so a refactor can be proven to change nothing else.

Writes one file per channel into OUT: both scripts' text and JSON in zh and en, the CLI's
``trace``/``shapes``/``cost``/``grad``/``mistakes``/``code``/``glossary`` output, the web pages
(with per-run tokens blanked) and every figure the lesson page links. Compare two recordings with
``diff -r``::

    python tools/record_behaviour.py /tmp/before   # on the old commit
    python tools/record_behaviour.py /tmp/after    # on the new one
    diff -r /tmp/before /tmp/after
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
RUNS: dict[str, list[str]] = {}
for lang in ("zh", "en"):
    for script in ("week07_attention.py", "course_examples/week07_attention.py"):
        tag = "lesson" if "/" not in script else "grad_script"
        RUNS[f"{tag}.{lang}.txt"] = [sys.executable, script, "--lang", lang]
        RUNS[f"{tag}.{lang}.json"] = [sys.executable, script, "--lang", lang, "--json"]
    cli = [str(BIN / "attnlab"), "--lang", lang]
    RUNS[f"trace.{lang}.json"] = [*cli, "trace", "--format", "json"]
    RUNS[f"trace.{lang}.txt"] = [*cli, "trace"]
    for command in ("shapes", "cost", "grad", "mistakes", "glossary", "lesson"):
        RUNS[f"{command}.{lang}.txt"] = [*cli, command]
    for kind in ("script", "head", "multihead"):
        RUNS[f"code_{kind}.{lang}.txt"] = [*cli, "code", kind]
PAGES = ["/lesson", "/glossary", "/explorer", "/search?q=softmax", "/notes", "/section/11"]
BLANK = re.compile(r'((?:csrf[^"]*|note_id)"\s*value="|content=")[A-Za-z0-9_\-]{20,}')


def _web(out: Path) -> None:
    from fastapi.testclient import TestClient

    from attnlab.web.app import create_app

    with tempfile.TemporaryDirectory() as data:
        client = TestClient(create_app(data_dir=Path(data)), base_url="http://127.0.0.1")
        figures: set[str] = set()
        for lang in ("zh", "en"):
            for page in PAGES:
                url = f"{page}{'&' if '?' in page else '?'}lang={lang}"
                text = BLANK.sub(r"\1TOKEN", client.get(url).text)
                name = page.strip("/").replace("/", "_").replace("?", "_").replace("=", "_")
                (out / f"web_{name}.{lang}.html").write_text(text, encoding="utf-8")
                figures |= set(re.findall(r"/figures/\w+/[\w\-]+\.svg", text))
        for ref in sorted(figures):
            svg = client.get(ref).text
            (out / ("fig_" + ref.split("/figures/")[1].replace("/", "_"))).write_text(
                svg, encoding="utf-8"
            )


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "ATTNLAB_DATA_DIR": tempfile.mkdtemp(), "COLUMNS": "100"}
    for name, argv in RUNS.items():
        done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
        (out / name).write_text(f"exit {done.returncode}\n{done.stdout}{done.stderr}", "utf-8")
    _web(out)
    print(f"{len(list(out.iterdir()))} files in {out}")


if __name__ == "__main__":
    main()
