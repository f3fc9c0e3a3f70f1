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
from attnlab.content import knowledge, search_query, sections
from attnlab.content.blocks import Block
from attnlab.content.search_query import Term
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
#: More documents than the index holds: every match is read, then filtered by the query's terms.
_EVERY = 10_000


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
    """The words of a query (:func:`attnlab.content.search_query.parse`);
    :class:`~attnlab.inputs.text_limits.TextError` (a ``ValueError``) when it is empty, longer
    than :data:`MAX_QUERY` characters or not UTF-8."""
    return search_query.words(search_query.parse(raw))


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


def snippet(text: str, terms: Sequence[Term]) -> str:
    """A short excerpt of ``text`` around the first of ``terms`` it contains, on one line."""
    flat = " ".join(text.split())
    found = search_query.pattern(list(terms)).search(flat)
    start = max((found.start() if found else 0) - _SNIPPET_BEFORE, 0)
    end = start + _SNIPPET_BEFORE + _SNIPPET_AFTER
    return ("…" if start else "") + flat[start:end] + ("…" if end < len(flat) else "")


def _note_hits(store: ProgressStore, terms: list[Term], lang: str) -> list[Hit]:
    label = "笔记" if lang == "zh" else "Note"
    hits = []
    for n in store.search_notes(search_query.words(terms)):
        if not search_query.matches(terms, n.text):
            continue
        where = f"{sections.label(n.section, lang)} {knowledge.section(n.section, lang).title}"
        title = f"{label} · {where}"
        hits.append(Hit(n.section, "note", title, snippet(n.text, terms), lang, n.id))
    return hits


def search(store: ProgressStore, query: str, lang: str, limit: int = LIMIT) -> list[Hit]:
    """Hits for ``query`` (read by :func:`attnlab.content.search_query.parse`): the learner's
    notes first, then the documents in ``lang``, then those found only in the other language;
    within each, the sections whose glossary terms contain it (the sections that teach it) come
    first, then every other document, best first.

    A document found in both languages is listed once, in ``lang``.

    Raises:
        ValueError: an empty or over-long query.
    """
    terms = search_query.parse(query)
    found = store.search_docs(digest(), corpus, search_query.words(terms), _EVERY)
    groups: dict[tuple[str, str], list[tuple[Doc, float]]] = {}
    for doc, score in found:  # the same document in both languages is one group
        if search_query.matches(terms, shown_text(doc)):
            groups.setdefault((doc.kind, doc.key), []).append((doc, score))
    ranked = []
    for pairs in groups.values():
        doc, score = next((p for p in pairs if p[0].lang == lang), pairs[0])
        teaches = doc.kind == "section" and any(
            search_query.matches(terms, d.terms) for d, _ in pairs
        )
        ranked.append((doc.lang != lang, not teaches, -score, doc))
    ranked.sort(key=lambda r: r[:3])
    hits = [
        Hit(d.section, d.kind, d.title, snippet(d.body if _has(d.body, terms) else d.title, terms),
            d.lang, d.key)
        for *_, d in ranked
    ]  # fmt: skip
    return (_note_hits(store, terms, lang) + hits)[:limit]


def shown_text(doc: Doc) -> str:
    """The text of ``doc`` the page a hit opens shows where it lands, where the query must be
    found: a check's page shows its questions and answers under the check's own heading, not
    the section's title; a section opened from a hit lists the glossary terms it teaches."""
    return doc.body if doc.kind == "check" else f"{doc.title}\n{doc.body}\n{doc.terms}"


def _has(text: str, terms: Sequence[Term]) -> bool:
    return search_query.pattern(list(terms)).search(text) is not None


def marks(query: str) -> re.Pattern[str]:
    """The pattern that marks ``query`` where a hit opens: the same one that finds it."""
    return search_query.pattern(search_query.parse(query))
