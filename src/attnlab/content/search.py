"""Search across the lesson: both languages' section text, the knowledge checks, the glossary,
the mistakes catalogue and the learner's own notes.

The documents are built once per process from the same blocks every front end shows
(:mod:`attnlab.content.sections`), :mod:`attnlab.content.knowledge` and
:mod:`attnlab.mistakes.catalogue`; they live in an FTS5 index in the progress file, rebuilt only
when attnlab's files change (:func:`digest`, :mod:`attnlab.progress.search_index`). A section's
glossary terms are indexed in their own column, and a section whose terms contain the query
comes first: the section that teaches a word ranks above those that only mention it.

Example::

    >>> import tempfile
    >>> from attnlab.progress.store import ProgressStore
    >>> store = ProgressStore.open(data_dir=tempfile.mkdtemp())
    >>> first = search(store, "softmax", "en")[0]
    >>> first.kind, first.section
    ('section', 5)
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attnlab import __version__
from attnlab.content import knowledge, sections
from attnlab.content.blocks import Block
from attnlab.core import example
from attnlab.inputs import text_limits
from attnlab.mistakes import catalogue
from attnlab.progress.search_index import Doc

if TYPE_CHECKING:
    from attnlab.progress.store import ProgressStore

MAX_QUERY = text_limits.KINDS["query"].most
LIMIT = 50
KINDS = ("section", "check", "glossary", "mistake", "note")
#: How each kind of hit is labelled, ``KIND_NAMES[lang][kind]``.
KIND_NAMES: dict[str, dict[str, str]] = {
    "zh": {"section": "正文", "check": "知识检查", "glossary": "术语", "mistake": "常见错误",
           "note": "我的笔记"},
    "en": {"section": "Section", "check": "Knowledge check", "glossary": "Glossary",
           "mistake": "Mistake", "note": "My note"},
}  # fmt: skip
_SNIPPET_BEFORE, _SNIPPET_AFTER = 30, 60
#: Control characters (Unicode category Cc) are not text anyone searches for: a query reads them
#: as blanks. (FTS5 reads a NUL as the end of its query string.)
_NOT_QUERY_TEXT = re.compile("[\x00-\x1f\x7f-\x9f]")


@dataclass(frozen=True)
class Hit:
    """One search result; ``lang`` is the language of the text it was found in."""

    section: int | None
    kind: str  # section | check | glossary | mistake | note
    title: str
    snippet: str
    lang: str
    key: str

    def as_json(self) -> dict[str, Any]:
        """The fields ``attnlab search --json`` prints."""
        return {k: v for k, v in asdict(self).items() if k in ("section", "kind", "title",
                                                               "snippet")}  # fmt: skip


def check_query(raw: str) -> list[str]:
    """The words of a query, split at blanks and at control characters (see
    :data:`_NOT_QUERY_TEXT`: SQLite would read a NUL as the query's end);
    :class:`~attnlab.inputs.text_limits.TextError` (a ``ValueError``) when it is empty, longer
    than :data:`MAX_QUERY` characters or not UTF-8."""
    return text_limits.check_text(_NOT_QUERY_TEXT.sub(" ", raw), "query").split()


def _block_text(block: Block) -> str:
    # A code block is found by its caption and where it lives, not by every name in its source;
    # a formula's LaTeX (\\end{bmatrix}) would make an unreadable snippet, and the prose around
    # it names what it shows.
    if block.kind == "math":
        return ""
    parts = [block.text, *block.items, *block.headers, *(c for row in block.rows for c in row)]
    if block.kind == "code":
        parts.append(str(block.data.get("path", "")))
    return " ".join(p for p in parts if p)


def _docs(lang: str) -> list[Doc]:
    docs = []
    terms = knowledge.glossary(lang)
    for view in sections.all_sections(lang):
        title = f"{view.label} {view.title}"
        taught = " ".join(t.name for t in terms if t.section == view.id)
        body = "\n".join(_block_text(b) for b in view.blocks)
        docs.append(Doc(f"s{view.id}", view.id, "section", lang, title, body, taught))
        c = view.check
        check_text = [c.summary, c.question, c.answer, c.mistake, *(e.prompt for e in c.exercises)]
        docs.append(Doc(f"c{view.id}", view.id, "check", lang, title, "\n".join(check_text)))
    docs += [Doc(f"g-{t.id}", t.section, "glossary", lang, t.name, t.definition) for t in terms]
    docs += [
        Doc(f"m-{m.name}", m.section, "mistake", lang, m.title[lang],
            f"{m.explain[lang]}\n{m.code}\n{m.fix}")
        for m in catalogue.CATALOGUE
    ]  # fmt: skip
    return docs


@cache
def corpus() -> tuple[Doc, ...]:
    """Every static document in both languages (built once per process)."""
    return tuple(doc for lang in example.LANGS for doc in _docs(lang))


@cache
def digest() -> str:
    """A hash of attnlab's version and of every source and data file of the package.

    The documents are a function of those files, so the index is rebuilt exactly when one of
    them changes, and checking costs no more than reading them (building the documents means
    computing the lesson)."""
    root = Path(__file__).resolve().parents[1]
    hashed = hashlib.sha256(__version__.encode("utf-8"))
    for path in sorted(p for p in root.rglob("*") if p.suffix in (".py", ".toml")):
        hashed.update(path.relative_to(root).as_posix().encode("utf-8") + b"\0")
        hashed.update(path.read_bytes())
    return hashed.hexdigest()


def snippet(text: str, words: Sequence[str]) -> str:
    """A short excerpt of ``text`` around the first of ``words`` it contains (case-insensitive),
    on one line."""
    flat = " ".join(text.split())
    lower = flat.lower()
    found = [i for i in (lower.find(w.lower()) for w in words) if i >= 0]
    start = max(min(found, default=0) - _SNIPPET_BEFORE, 0)
    end = start + _SNIPPET_BEFORE + _SNIPPET_AFTER
    return ("…" if start else "") + flat[start:end] + ("…" if end < len(flat) else "")


def _note_hits(store: ProgressStore, words: Sequence[str], lang: str) -> list[Hit]:
    label = "笔记" if lang == "zh" else "Note"
    hits = []
    for n in store.search_notes(words):
        where = f"{sections.label(n.section, lang)} {knowledge.section(n.section, lang).title}"
        title = f"{label} · {where}"
        hits.append(Hit(n.section, "note", title, snippet(n.text, words), lang, n.id))
    return hits


def search(store: ProgressStore, query: str, lang: str, limit: int = LIMIT) -> list[Hit]:
    """Hits for ``query``: the learner's notes first, then the sections whose glossary terms
    contain it (the sections that teach it), then every other document, best first.

    A document found in both languages is listed once, in ``lang`` when that one matched.

    Raises:
        ValueError: an empty or over-long query.
    """
    words = check_query(query)
    found = store.search_docs(digest(), corpus, words, limit * 2)
    groups: dict[tuple[str, str], list[tuple[Doc, float]]] = {}
    for doc, score in found:  # the same document in both languages is one group
        groups.setdefault((doc.kind, doc.key), []).append((doc, score))
    ranked = []
    for pairs in groups.values():
        doc, score = next((p for p in pairs if p[0].lang == lang), pairs[0])
        teaches = doc.kind == "section" and any(_has(d.terms, words, every=True) for d, _ in pairs)
        ranked.append((not teaches, -score, doc))
    ranked.sort(key=lambda r: r[:2])
    hits = [
        Hit(d.section, d.kind, d.title, snippet(d.body if _has(d.body, words) else d.title, words),
            d.lang, d.key)
        for *_, d in ranked
    ]  # fmt: skip
    return (_note_hits(store, words, lang) + hits)[:limit]


def _has(text: str, words: Sequence[str], every: bool = False) -> bool:
    lower = text.lower()
    found = [w.lower() in lower for w in words]
    return all(found) if every else any(found)


def marks(words: Sequence[str]) -> re.Pattern[str]:
    """A case-insensitive pattern of ``words`` (for highlighting them where a hit opens)."""
    ordered = sorted(words, key=len, reverse=True)  # the longer of two overlapping words wins
    return re.compile("|".join(re.escape(w) for w in ordered), re.IGNORECASE)
