"""The FastAPI application of the web lesson: :func:`create_app`.

Example::

    >>> from fastapi.testclient import TestClient
    >>> client = TestClient(create_app(data_dir=tmp_path), base_url="http://127.0.0.1")
    >>> client.get("/lesson").status_code
    200
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import AsyncIterator
from pathlib import Path

from fastapi import FastAPI
from jinja2 import BytecodeCache, Environment, FileSystemLoader, select_autoescape
from jinja2.bccache import Bucket
from markupsafe import Markup
from starlette.middleware.trustedhost import TrustedHostMiddleware

from attnlab.content import intro, sections
from attnlab.core.example import SECTION_COUNT
from attnlab.grading import practice
from attnlab.progress.exchange import check_profile
from attnlab.text.i18n import LANGS, resolve_lang
from attnlab.web import blocks, figures, fonts
from attnlab.web.assets import CachedStatic, static_url
from attnlab.web.common import Settings
from attnlab.web.compression import IsalGZip
from attnlab.web.errors import add_error_handlers
from attnlab.web.fragments import SectionCache
from attnlab.web.security import LOCAL_HOSTS, MAX_BODY_BYTES, BodyLimit, SessionAndHeaders
from attnlab.web.ui_text import UI

HERE = Path(__file__).parent
#: Pages are compressed when the browser asks (``/lesson``: 220 KB of HTML to about a fifth),
#: by ISA-L (:mod:`attnlab.web.compression`); smaller answers are sent as they are.
GZIP_MIN_BYTES = 1024


class _CompiledOnce(BytecodeCache):
    """The templates' compiled code, kept for the life of the process: every app this process
    builds (a test's, a worker's after a reload) compiles each template once, not once per app.
    Jinja keys a bucket by the template's name and checks the source's checksum."""

    def __init__(self) -> None:
        self._code: dict[str, bytes] = {}

    def load_bytecode(self, bucket: Bucket) -> None:
        if (code := self._code.get(bucket.key)) is not None:
            bucket.bytecode_from_string(code)

    def dump_bytecode(self, bucket: Bucket) -> None:
        self._code[bucket.key] = bucket.bytecode_to_string()


_COMPILED = _CompiledOnce()


def _environment(figures_on: bool) -> Environment:
    env = Environment(
        bytecode_cache=_COMPILED,
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=select_autoescape(["html"], default=True),  # user text is always escaped
        trim_blocks=True,
        lstrip_blocks=True,
        # The templates are the package's own files: a page (and each template it includes)
        # does not stat them again on every request to see whether they changed.
        auto_reload=False,
    )
    env.globals["figure_ref"] = figures.ref
    env.globals["practice_sections"] = practice.SECTIONS
    env.globals["mastery_n"] = practice.MASTERY
    env.globals["mathml"] = blocks.mathml
    env.globals["highlighted"] = blocks.highlighted
    env.globals["font_faces"] = fonts.face_css
    env.globals["code_css_url"] = blocks.code_css_url
    env.globals["static_url"] = static_url

    # A section's explanation depends only on its language, so it is rendered once; the
    # learner's check and progress around it are rendered on every request.
    @functools.cache
    def section_body(section_id: int, lang: str, level: int = 3) -> Markup:
        # level: of the block titles, one below the section's own heading (<h1> on its page)
        macro = env.get_template("_blocks.html").module.render_blocks  # type: ignore[attr-defined]
        blocks = sections.section(section_id, lang).blocks
        return Markup(macro(blocks, UI[lang], figures_on, level))

    env.globals["section_body"] = section_body

    @functools.cache
    def intro_body(lang: str) -> Markup:
        macro = env.get_template("_blocks.html").module.render_blocks  # type: ignore[attr-defined]
        return Markup(macro(intro.intro(lang), UI[lang], figures_on))

    env.globals["intro_body"] = intro_body
    env.globals["intro_title"] = intro.title
    # Around it, the learner's state: rendered once per state (web/fragments.py).
    section = env.get_template("_section.html").module.render_section  # type: ignore[attr-defined]
    env.globals["section_html"] = SectionCache(section)
    return env


@contextlib.asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    """At a clean stop, the stores' WALs go into their files (:meth:`Settings.close_stores`)."""
    yield
    app.state.settings.close_stores()


def create_app(
    data_dir: str | os.PathLike[str] | None = None,
    profile: str | None = None,
    *,
    lang: str | None = None,
    figures_on: bool = True,
    hosts: list[str] | None = None,
    max_body: int = MAX_BODY_BYTES,
    audit_off: str | None = "auto",
    db: str | None = None,
    class_only: bool = False,
) -> FastAPI:
    """Build the web lesson.

    Args:
        data_dir: folder of the progress database (default: ``$ATTNLAB_DATA_DIR`` or the
            platform's user data folder), the same file ``attnlab quiz`` uses.
        profile: learner profile (default ``$ATTNLAB_PROFILE`` or ``default``).
        lang: default page language (``zh`` unless ``$ATTNLAB_LANG`` says otherwise).
        figures_on: draw the figures (tests switch them off to stay fast).
        hosts: host names to answer to (default: the loopback names).
        max_body: largest request body accepted, in bytes (the "Check my code" form: more).
        audit_off: why "Check my code" is off, ``"shared"`` or ``"sandbox"``
            (:func:`attnlab.web.routes_audit.gate` decides it for ``attnlab serve``); ``None``:
            on; ``"auto"``: on when only loopback host names are answered, else ``"shared"``.
        db: a PostgreSQL server's URL for the progress store (default ``$ATTNLAB_DB``, else
            the file in ``data_dir``).
        class_only: serve class learners only (a visitor without a session from
            ``/join/TOKEN`` is asked for their link instead of seeing ``profile``'s progress).
    """
    if profile is not None:
        check_profile(profile)
    app = FastAPI(title="attnlab web lesson", docs_url=None, redoc_url=None, openapi_url=None,
                  lifespan=_lifespan)  # fmt: skip
    shared = not set(hosts or LOCAL_HOSTS) <= set(LOCAL_HOSTS)  # other machines reach it
    if audit_off == "auto":
        audit_off = "shared" if shared else None
    if audit_off not in (None, "shared", "sandbox"):
        raise ValueError(f"audit_off must be None, 'shared' or 'sandbox', got {audit_off!r}")
    app.state.settings = Settings(
        Path(data_dir) if data_dir else None,
        profile,
        resolve_lang(lang),
        figures_on,
        audit_off,
        db,
        class_only,
        shared=shared,
    )
    app.state.templates = _environment(figures_on)
    app.mount("/static", CachedStatic(directory=HERE / "static"), name="static")
    from attnlab.web import (
        routes_audit,
        routes_class,
        routes_explorer,
        routes_notes,
        routes_pages,
        routes_practice,
        routes_progress,
        routes_search,
    )

    routes = (routes_pages, routes_progress, routes_practice, routes_explorer, routes_notes)
    for module in (*routes, routes_search, routes_audit, routes_class, fonts):
        app.include_router(module.router)
    add_error_handlers(app)  # 4xx refusals and the 500 page: attnlab.web.errors
    # Inside the session middleware, which streams what it passes on: GZip sees whole answers
    # (their length decides; a streamed one would always be compressed).
    app.add_middleware(IsalGZip, minimum_size=GZIP_MIN_BYTES)
    app.add_middleware(SessionAndHeaders)
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=hosts or list(LOCAL_HOSTS))
    wide = (routes_audit.AUDIT_PATH, routes_audit.AUDIT_BODY_BYTES)
    app.add_middleware(BodyLimit, max_bytes=max_body, wide=wide)
    return app


def build_shared(app: FastAPI) -> None:
    """Render now what every learner's pages share: each section's explanation in each
    language, with its figures (read from disk, or drawn once). ``attnlab serve`` calls this
    before it answers any request, so no request waits for it or builds it in parallel."""
    section_body = app.state.templates.globals["section_body"]
    for lang in LANGS:
        app.state.templates.globals["intro_body"](lang)
        for section_id in range(SECTION_COUNT):
            section_body(section_id, lang)  # on /lesson (block titles <h3>)
            section_body(section_id, lang, 2)  # on its own page, under its <h1>
