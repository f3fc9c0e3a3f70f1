"""The explorer: a page with editable matrices, a form fallback and a JSON endpoint for live
updates. Nothing is saved; the routes still require the same-origin check and session token.
Every refusal of the learner's input is one line in the page's language."""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from attnlab.inputs import safe_load
from attnlab.inputs.explorer import (
    CELL_WORDS,
    LABEL_MAX,
    LIMITS,
    MATRICES,
    ExplorerError,
    cell_place,
    check_state_text,
    matrix_name,
    whole,
)
from attnlab.inputs.text_limits import ascii_forms
from attnlab.text.errors import InputError
from attnlab.text.i18n import error_message
from attnlab.web import explorer
from attnlab.web.common import csrf_protect, lang_of, page_context, remember_lang, settings
from attnlab.web.security import RequestRefused
from attnlab.web.ui_text import UI

router = APIRouter()
SIZES = ("T", "C", "d", "n_head")


def _page(request: Request, data: dict[str, Any], lang: str) -> HTMLResponse:
    status, stages, error, field, cell = 200, None, "", "", ""
    try:
        stages, _ = explorer.compute(data, lang)
    except InputError as exc:
        error, status = error_message(exc, lang), 422
        field, cell = getattr(exc, "field", ""), getattr(exc, "cell", "")
    other = "en" if lang == "zh" else "zh"
    ctx = page_context(
        request,
        lang,
        settings(request).store().summary(),
        page="explorer",
        data=data,
        sizes=explorer.sizes_of(data),
        limits=LIMITS,
        label_max=LABEL_MAX,
        tokens=data["tokens"],
        **explorer.views_context(stages, data["tokens"], lang),
        error=error,
        error_matrix=field,
        error_cell=cell,
        error_at=_error_at(field, cell) if error else "end",
        cell_place=lambda where: cell_place(where, lang),
        cell_words=CELL_WORDS[lang],
        reset=UI[lang]["explorer_reset"].format(
            names=("、" if lang == "zh" else ", ").join(map(matrix_name, data.get("reset", [])))
        )
        if data.get("reset")
        else "",
        presets=explorer.PRESETS,
        preset=data["preset"],
        state=explorer.state_json(data),
        switch_query=explorer.page_query(data, other),
    )
    html = request.app.state.templates.get_template("explorer.html").render(**ctx)
    response = HTMLResponse(html, status_code=status)
    remember_lang(request, response, lang)
    return response


def _error_at(field: str, cell: str) -> str:
    """Where the page puts an error: by the grid it concerns (``x1``: prompt B's X, ``w_q0``),
    by the size menus, or at the end of the form."""
    if field in SIZES or field == "preset":
        return "sizes"
    if field in ("x", "tokens"):
        prompt = re.match(r"\w+\[(\d+)\]", cell)
        return f"x{prompt[1] if prompt else 0}"
    return f"{field}0" if field in MATRICES[1:] or field == "w_o" else "end"


def _state(raw: str | None) -> Any:
    """The ``state`` query parameter as JSON, or ``None`` when absent or unreadable (the page
    then starts from the preset).

    Raises:
        ExplorerError: a text in it holds a lone surrogate (:func:`check_state_text`).
    """
    if not raw:
        return None
    try:
        state = safe_load.loads(raw, ".json", "state")
    except InputError:
        return None
    check_state_text(state)
    return state


@router.get("/explorer", response_class=HTMLResponse)
def explorer_page(request: Request) -> HTMLResponse:
    """The explorer with a preset (``?preset=lesson``) at the sizes asked (``?T=3&C=4&d=2`` and
    ``n_head``), with the learner's edits from ``?state=`` (see :func:`explorer.with_state`)."""
    lang = lang_of(request)
    query = request.query_params
    try:
        name = explorer.check_preset(query.get("preset", "lesson"))
        sizes = {k: whole(query[k], k) if k in query else explorer.DEFAULT_SIZES[k] for k in SIZES}
        state = _state(query.get("state"))
    except ExplorerError as exc:
        raise RequestRefused(400, exc.localized(lang)) from None
    data = explorer.preset_data(name, **sizes, lang=lang)
    return _page(request, explorer.with_state(data, state), lang)


def _cells(form: Any, name: str, shape: tuple[int, ...]) -> Any:
    """Rebuild a nested list from form fields ``name[i][j]...``; text that is not a number stays
    text, so the check names the cell in its message."""
    if not shape:
        raw = str(form.get(name, "")).strip()
        try:
            return float(ascii_forms(raw))
        except ValueError:
            return raw[:24]
    return [_cells(form, f"{name}[{i}]", shape[1:]) for i in range(shape[0])]


def _form_labels(form: Any, default: list[list[str]]) -> list[list[str]]:
    return [[str(form.get(f"tok[{b}][{t}]", label)).strip()[:LABEL_MAX]
             for t, label in enumerate(row)] for b, row in enumerate(default)]  # fmt: skip


@router.post("/explorer", response_class=HTMLResponse, dependencies=[Depends(csrf_protect)])
async def explorer_form(request: Request) -> HTMLResponse:
    """The no-JavaScript path: the form posts every cell, the page comes back recomputed."""
    lang = lang_of(request)
    form = await request.form()
    try:
        name = explorer.check_preset(str(form.get("preset", "lesson")))
        T, C, d, n_head = (whole(form.get(k, "1" if k == "n_head" else ""), k) for k in SIZES)
    except ExplorerError as exc:
        raise RequestRefused(422, exc.localized(lang)) from None
    data = explorer.preset_data(name, T, C, d, n_head, lang)
    width = C if n_head > 1 else d
    data |= {"x": _cells(form, "x", (LIMITS["B"], T, C))}
    data |= {k: _cells(form, k, (C, width)) for k in MATRICES[1:]}
    if n_head > 1:
        data["w_o"] = _cells(form, "w_o", (C, C))
    data["tokens"] = _form_labels(form, data["tokens"])
    return _page(request, data, lang)


@router.post("/api/explorer", dependencies=[Depends(csrf_protect)])
async def explorer_api(request: Request) -> Response:
    """Live update: JSON numbers in, every stage out (numbers and the rendered tables)."""
    if "application/json" not in request.headers.get("content-type", ""):
        raise RequestRefused(415, "expected Content-Type: application/json")
    lang = lang_of(request)
    try:
        text = (await request.body()).decode("utf-8")
    except UnicodeDecodeError:
        raise RequestRefused(400, "body is not UTF-8 text") from None
    try:
        # The body is at most 64 KiB (security.BodyLimit); safe_load still refuses nesting the
        # parser cannot follow and integers Python will not convert, as 422 rather than a 500.
        stages, tokens = explorer.compute(safe_load.loads(text, ".json", "body"), lang)
    except safe_load.InvalidSyntax as exc:
        raise RequestRefused(400, str(exc)) from None
    except InputError as exc:
        body = {"error": error_message(exc, lang), "field": getattr(exc, "field", "")}
        body |= {"cell": getattr(exc, "cell", ""), "stage": explorer.error_stage(exc)}
        return JSONResponse(body, status_code=422)
    template = request.app.state.templates.get_template("_stages.html")
    html = template.render(**explorer.views_context(stages, tokens, lang), lang=lang, ui=UI[lang])
    return JSONResponse({"stages": explorer.result_json(stages), "html": html})
