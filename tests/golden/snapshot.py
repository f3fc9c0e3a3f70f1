"""What a learner sees, as one JSON-ready dict: the before/after check of the "one house" move.

Kept only while modules move (issue 12): ``python tests/golden/snapshot.py > tests/golden/
behaviour.json`` records today's behaviour; ``tests/test_behaviour_unchanged.py`` compares.
"""

from __future__ import annotations

import hashlib
import html.parser
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
NUMBER = re.compile(r"[−-]?\d+(?:\.\d+)?(?:e[+-]?\d+)?")


def _run(*args: str) -> str:
    env = {**os.environ, "PYTHONUTF8": "1", "COLUMNS": "120"}
    env.pop("ATTNLAB_LANG", None)
    out = subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    return out.stdout


def _cli(*args: str) -> str:
    return _run("-m", "attnlab", *args)


def scripts() -> dict[str, Any]:
    """Both scripts' --json documents and texts, and `attnlab trace --format json`."""
    found: dict[str, Any] = {}
    for lang in ("zh", "en"):
        for name, path in (("lesson", "week07_attention.py"),
                           ("grad", "course_examples/week07_attention.py")):  # fmt: skip
            found[f"{name}-json-{lang}"] = json.loads(_run(path, "--json", "--lang", lang))
            found[f"{name}-text-{lang}"] = _run(path, "--lang", lang)
        found[f"trace-json-{lang}"] = json.loads(_cli("--lang", lang, "trace", "--format", "json"))
        found[f"trace-two-heads-{lang}"] = json.loads(
            _cli("--lang", lang, "trace", "--format", "json", "--input", "examples/two-heads.toml")
        )
    return found


def _figure_data(fig: Any) -> dict[str, Any]:
    axes = []
    for ax in fig.axes:
        images = []
        for im in ax.images:
            arr = im.get_array()
            images.append({"data": np.round(np.ma.getdata(arr).astype(float), 10).tolist(),
                           "mask": np.ma.getmaskarray(arr).tolist()})  # fmt: skip
        axes.append({
            "title": ax.get_title(), "xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel(),
            "xticks": [t.get_text() for t in ax.get_xticklabels()],
            "yticks": [t.get_text() for t in ax.get_yticklabels()],
            "texts": [t.get_text() for t in ax.texts],
            "lines": [np.round(np.asarray(ln.get_xydata(), float), 10).tolist()
                      for ln in ax.lines],
            "images": images,
        })  # fmt: skip
    return {"suptitle": fig._suptitle.get_text() if fig._suptitle else None, "axes": axes}


def figures() -> dict[str, Any]:
    """Every figure's drawn data (images, lines, texts, labels), hashed per figure."""
    import matplotlib

    matplotlib.use("Agg")
    from attnlab.inputs import load_input
    from attnlab.plots import input_source, lesson_source
    from attnlab.plots.files import make_figures

    found = {}
    for lang in ("zh", "en"):
        mine = input_source(load_input(ROOT / "examples/two-heads.toml"))
        sources = {"lesson": lesson_source(lang), "two-heads": mine}
        for kind in ("weights", "chain", "scale", "mask", "cost"):
            for sname, source in sources.items():
                if kind not in ("weights", "chain") and sname != "lesson":
                    continue
                for stem, fig in make_figures(kind, source, lang):
                    data = json.dumps(_figure_data(fig), ensure_ascii=False, sort_keys=True)
                    found[f"{lang}/{sname}/{stem}"] = hashlib.sha256(data.encode()).hexdigest()
    return found


class _Text(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._skip += tag in ("script", "style")

    def handle_endtag(self, tag: str) -> None:
        self._skip -= tag in ("script", "style")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def web_numbers() -> dict[str, Any]:
    """Every number in the text of every web page, in page order, per language."""
    from fastapi.testclient import TestClient

    from attnlab.web.app import create_app

    found = {}
    with tempfile.TemporaryDirectory() as tmp:
        client = TestClient(create_app(tmp, figures_on=False), base_url="http://127.0.0.1")
        pages = ["/lesson", "/explorer", "/glossary", *(f"/section/{n}" for n in range(20))]
        for lang in ("zh", "en"):
            for page in pages:
                response = client.get(page, params={"lang": lang})
                parser = _Text()
                parser.feed(response.text)
                found[f"{lang}{page}"] = NUMBER.findall(" ".join(parser.parts))
    return found


def snapshot() -> dict[str, Any]:
    return {"scripts": scripts(), "figures": figures(), "web": web_numbers()}


if __name__ == "__main__":
    json.dump(snapshot(), sys.stdout, ensure_ascii=False, indent=1, sort_keys=True)
