"""The explorer: a page with editable matrices, a form fallback and a JSON endpoint for live
updates. Nothing is saved; the routes still require the same-origin check and session token."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from attnlab import safe_load
from attnlab.errors import InputError
from attnlab.i18n import error_message
from attnlab.web import explorer
from attnlab.web.common import csrf_protect, lang_of, page_context, remember_lang, settings
from attnlab.web.security import RequestRefused
from attnlab.web.ui_text import UI

router = APIRouter()


def _size(request: Request, name: str, default: int) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    # isascii: "²" is a digit to isdigit but not to int; a few digits: int() refuses 4300.
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 6):
        raise RequestRefused(400, f"{name}: expected a whole number but found {raw[:20]!r}")
    return int(raw)


def _page(
    request: Request, data: dict[str, Any], lang: str, preset: str = "", error: str = ""
) -> HTMLResponse:
    status = 200
    stages = None
    if not error:
        try:
            stages = explorer.compute(data)
        except InputError as exc:
            error, status = error_message(exc, lang), 422
    field, cell = explorer.error_field(error) if error else ("", "")
    x = data["x"]
    ctx = page_context(
        request,
        lang,
        settings(request).store().summary(),
        page="explorer",
        data=data,
        sizes={"T": len(x[0]), "C": len(x[0][0]), "d": len(data["w_q"][0])},
        limits=explorer.LIMITS,
        tokens=explorer.tokens_for(len(x[0]), len(x), lang),
        **explorer.views_context(stages, lang),
        error=error,
        error_matrix=field,
        error_cell=cell,
        presets=explorer.PRESETS,
        preset=preset,
    )
    html = request.app.state.templates.get_template("explorer.html").render(**ctx)
    response = HTMLResponse(html, status_code=status)
    remember_lang(request, response, lang)
    return response


@router.get("/explorer", response_class=HTMLResponse)
def explorer_page(request: Request) -> HTMLResponse:
    """The explorer with a preset (``?preset=lesson``) at the sizes asked (``?T=3&C=4&d=2``)."""
    lang = lang_of(request)
    name = request.query_params.get("preset", "lesson")
    try:
        data = explorer.preset(name)
        T = _size(request, "T", len(data["x"][0]))
        C = _size(request, "C", len(data["x"][0][0]))
        d = _size(request, "d", len(data["w_q"][0]))
        data = explorer.resize(data, T, C, d)
    except InputError as exc:
        raise RequestRefused(400, str(exc)) from None
    return _page(request, data, lang, preset=name)


def _cells(form: Any, name: str, shape: tuple[int, ...]) -> Any:
    """Rebuild a nested list from form fields ``name[i][j]...``; text that is not a number stays
    text, so :func:`attnlab.inputs.parse_input` names the cell in its message."""
    if not shape:
        raw = str(form.get(name, "")).strip()
        try:
            return float(raw)
        except ValueError:
            return raw
    return [_cells(form, f"{name}[{i}]", shape[1:]) for i in range(shape[0])]


@router.post("/explorer", response_class=HTMLResponse, dependencies=[Depends(csrf_protect)])
async def explorer_form(request: Request) -> HTMLResponse:
    """The no-JavaScript path: the form posts every cell, the page comes back recomputed."""
    lang = lang_of(request)
    form = await request.form()
    try:
        T, C, d = (int(str(form.get(k, ""))) for k in ("T", "C", "d"))
        explorer.check_sizes(T=T, C=C, d=d)
    except ValueError:
        raise RequestRefused(422, "T, C, d: expected whole numbers") from None
    except InputError as exc:
        raise RequestRefused(422, str(exc)) from None
    B = explorer.LIMITS["B"]
    data = {"x": _cells(form, "x", (B, T, C))}
    data |= {k: _cells(form, k, (C, d)) for k in explorer.MATRICES[1:]}
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
        stages = explorer.compute(safe_load.loads(text, ".json", "body"))
    except safe_load.InvalidSyntax as exc:
        raise RequestRefused(400, str(exc)) from None
    except InputError as exc:
        field, cell = explorer.error_field(str(exc))
        body = {"error": error_message(exc, lang), "field": field, "cell": cell}
        return JSONResponse(body | {"stage": explorer.error_stage(exc)}, status_code=422)
    template = request.app.state.templates.get_template("_stages.html")
    html = template.render(**explorer.views_context(stages, lang), lang=lang, ui=UI[lang])
    return JSONResponse({"stages": explorer.result_json(stages), "html": html})
