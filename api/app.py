"""The FastAPI app: routes of a few lines over one core call each, the index opened once.

``create_app()`` builds the app; ``tbx serve`` calls :func:`serve`. The index is opened in the
``lifespan`` (read-only SQLite, shared by every request) and handed to routes with ``Depends``;
tests give the app a tiny index through ``index_factory`` or ``app.dependency_overrides[get_index]``.

Nothing a client sends is logged or stored: the access log drops query strings, error messages
never quote the request, and the catch-all logs only where an exception was raised.
"""

from __future__ import annotations

import logging
import os
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Callable

from fastapi import APIRouter, Depends, FastAPI, Path as PathParam, Query, Request
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool

from explainer.core import explain_text
from explainer.index import Index, open_index

from .errors import BodyLimitMiddleware, CatchAllMiddleware, error_response, install_handlers
from .models import (
    MAX_QUERY_CHARS,
    EntriesResponse,
    EntryResponse,
    ErrorResponse,
    ExplainRequest,
    ExplainResponse,
    HealthResponse,
    SearchLang,
    SearchResponse,
)

MAX_BODY_BYTES = 1 << 20  # 1 MiB: 413 beyond, counted while the body is read
INLINE_CHARS = 64 * 1024  # longer pastes are explained in a worker thread so the event loop stays free
MAX_SEARCH_LIMIT = 50
CORS_ENV = "TBX_CORS_ORIGINS"  # comma-separated origins, e.g. "https://wiki.example.com"; "*" for any
STATIC_DIR = Path(__file__).resolve().parent / "static"

# The pages load only what this app serves; the answer HTML inserted by the page cannot run script.
PAGE_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}

ERRORS = {
    404: {"model": ErrorResponse, "description": "Unknown id or route"},
    413: {"model": ErrorResponse, "description": "Request body larger than 1 MiB"},
    422: {"model": ErrorResponse, "description": "Malformed JSON, wrong types or values out of range"},
}

router = APIRouter()


# --- dependencies -----------------------------------------------------------------------------

async def get_index(request: Request) -> Index:
    """The index opened at start-up (async: no thread hop per request)."""
    return request.app.state.index


def resolve_lang(lang: str, parsed_hint: str | None, accept_language: str | None) -> str:
    """``auto``: Chinese when the paste's own words are Chinese, else the client's preference.

    The core's ``detect_lang`` falls back to this *server's* locale, which says nothing about the
    client, so the API uses the parser's ``lang_hint`` and the Accept-Language header instead.
    """
    if lang != "auto":
        return lang
    if parsed_hint in ("zh", "en"):
        return parsed_hint
    return _preferred(accept_language or "")


def _preferred(header: str) -> str:
    best, best_q = "en", -1.0
    for part in header.split(",")[:20]:
        tag, _, params = part.strip().partition(";")
        q = 1.0
        if params.strip().startswith("q="):
            try:
                q = float(params.strip()[2:])
            except ValueError:
                q = 0.0
        primary = tag.strip().lower()[:2]
        if primary in ("zh", "en") and q > best_q:
            best, best_q = primary, q
    return best


def _explain(body: ExplainRequest, index: Index, accept_language: str | None) -> dict:
    answer = explain_text(body.text, index, top=body.top)
    lang = resolve_lang(body.lang, answer.parsed.lang_hint, accept_language)
    return answer.as_json(lang=lang, rendered=True) | {"lang": lang}


# --- routes -----------------------------------------------------------------------------------

@router.post("/v1/explain", response_model=ExplainResponse, responses=ERRORS, tags=["explain"])
async def explain(body: ExplainRequest, request: Request, index: Index = Depends(get_index)) -> JSONResponse:
    """Explain a pasted traceback: the `tbx explain --json` result, each match rendered as Markdown
    and HTML in the asked language with its fix templates filled."""
    accept = request.headers.get("accept-language")
    if len(body.text) > INLINE_CHARS:
        return JSONResponse(await run_in_threadpool(_explain, body, index, accept))
    return JSONResponse(_explain(body, index, accept))


@router.get("/v1/entries", response_model=EntriesResponse, tags=["knowledge base"])
async def list_entries(index: Index = Depends(get_index)) -> JSONResponse:
    """Every entry of the knowledge base: id, category, kind and both titles."""
    return JSONResponse({"entries": index.list_entries()})


@router.get("/v1/entries/{entry_id}", response_model=EntryResponse, responses=ERRORS, tags=["knowledge base"])
async def read_entry(entry_id: str = PathParam(max_length=200), index: Index = Depends(get_index)) -> JSONResponse:
    """One entry in full, both languages."""
    entry = index.entry(entry_id)
    if entry is None:
        return error_response(404, "no entry with this id: GET /v1/entries lists them")
    return JSONResponse(entry)


@router.get("/v1/search", response_model=SearchResponse, responses=ERRORS, tags=["knowledge base"])
async def search(
    q: str = Query(min_length=1, max_length=MAX_QUERY_CHARS, description="Words in English or Chinese, or a pasted message fragment."),
    lang: SearchLang = Query("both"),
    limit: int = Query(10, ge=1, le=MAX_SEARCH_LIMIT),
    index: Index = Depends(get_index),
) -> JSONResponse:
    """Ranked full-text search over titles, summaries, explanations, causes and messages."""
    return JSONResponse({"results": index.search(q, lang=lang, limit=limit)})


@router.get("/healthz", response_model=HealthResponse, tags=["service"])
async def healthz(index: Index = Depends(get_index)) -> JSONResponse:
    """Liveness: the index is open."""
    return JSONResponse({"status": "ok", "entries": len(index.entries)})


router.add_api_route("/healthz", healthz, methods=["HEAD"], include_in_schema=False)  # load-balancer probes


@router.api_route("/", methods=["GET", "HEAD"], include_in_schema=False)
async def paste_page() -> FileResponse:
    return FileResponse(STATIC_DIR / "index.html", headers=PAGE_HEADERS)


@router.get("/docs", include_in_schema=False)
async def docs_page() -> FileResponse:
    """API docs rendered in the browser from /openapi.json by a local script: no CDN."""
    return FileResponse(STATIC_DIR / "docs.html", headers=PAGE_HEADERS)


# --- the app ----------------------------------------------------------------------------------

class _NoQueryInAccessLog(logging.Filter):
    """Drop query strings from uvicorn's access log: a search query may be a fragment of a paste."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str) and "?" in args[2]:
            record.args = (*args[:2], args[2].split("?", 1)[0], *args[3:])
        return True


def cors_origins_from_env() -> list[str]:
    return [o.strip() for o in os.environ.get(CORS_ENV, "").split(",") if o.strip()]


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("traceback-explainer")
    except Exception:  # noqa: BLE001 - a source checkout that was never installed
        return "0.1.0"


def create_app(
    index_factory: Callable[[], Index] = open_index,
    *,
    cors_origins: list[str] | None = None,
    max_body: int = MAX_BODY_BYTES,
) -> FastAPI:
    """The app. ``cors_origins``: None reads ``TBX_CORS_ORIGINS``; empty means CORS off (default)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        index = index_factory()
        index.matcher  # noqa: B018 - build the matcher now, not on the first request
        app.state.index = index
        access = logging.getLogger("uvicorn.access")
        quiet = _NoQueryInAccessLog()
        access.addFilter(quiet)
        try:
            yield
        finally:
            access.removeFilter(quiet)

    app = FastAPI(
        title="traceback-explainer",
        version=_version(),
        summary="Paste a PyTorch traceback, get what went wrong, where in your code, and a verified fix, in English or Chinese.",
        lifespan=lifespan,
        docs_url=None,  # FastAPI's pages load their assets from a CDN; /docs is served from static/
        redoc_url=None,
    )
    install_handlers(app)
    app.include_router(router)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")

    # Added innermost first: CatchAll wraps CORS wraps BodyLimit, so a 413 still carries CORS headers.
    app.add_middleware(BodyLimitMiddleware, max_body=max_body)
    origins = cors_origins_from_env() if cors_origins is None else list(cors_origins)
    if origins:
        app.add_middleware(
            CORSMiddleware, allow_origins=origins, allow_methods=["GET", "POST"],
            allow_headers=["content-type", "accept-language"], max_age=600,
        )
    app.add_middleware(CatchAllMiddleware)
    return app


def app_factory() -> FastAPI:
    """For ``uvicorn --factory api.app:app_factory`` and multi-worker ``tbx serve``."""
    return create_app()


def serve(host: str = "127.0.0.1", port: int = 8000, workers: int = 1) -> None:
    """``tbx serve``: uvicorn with one app per worker process, each opening the index read-only."""
    import uvicorn

    if workers > 1:
        uvicorn.run("api.app:app_factory", factory=True, host=host, port=port, workers=workers)
    else:
        uvicorn.run(create_app(), host=host, port=port)
