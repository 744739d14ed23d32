"""The FastAPI app: routes of a few lines over one core call each, the index opened once.

``create_app()`` builds the app; ``tbx serve`` calls :func:`serve`. The index is opened in the
``lifespan`` (read-only SQLite, shared by every request) and handed to routes with ``Depends``;
tests give the app a tiny index through ``index_factory`` or ``app.dependency_overrides[get_index]``.

Nothing a client sends is logged or stored: the access log drops query strings, error messages
never quote the request, and the catch-all logs only where an exception was raised.

Load: explanations never run on the event loop. :class:`ExplainPool` runs them in a few threads
(``max_concurrency``) with a bounded number waiting (``queue``); a request beyond that, or one not
answered within ``timeout`` seconds, gets 503 in the one error shape with ``Retry-After``. Each
explanation is itself bounded by the core's 200 ms budget, so the loop keeps answering ``/healthz``
and the other routes while pastes are explained. Every response carries
``X-Content-Type-Options: nosniff``.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import re
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Query, Request
from fastapi import Path as PathParam
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

from explainer.knowledge.index import Index, open_index
from explainer.match.explain import explain_text

from .errors import BodyLimitMiddleware, CatchAllMiddleware, JSONResponse, error_response, install_handlers
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
# Safe defaults for `tbx serve` (each can be set there): explanations at once (threads: the work is
# CPU-bound Python, so a few suffice and more only compete with the event loop), explanations
# waiting, seconds before a request is answered 503, connections uvicorn accepts at once, seconds an
# idle keep-alive connection is kept.
# explanations are CPU-bound Python: one thread per worker process already uses its core (the GIL);
# more threads only make the event loop, /healthz with it, wait longer for the lock (measured:
# /healthz p50 under 64 connections 3.9 ms with one, 11.6 ms with two, 14-50 ms with four)
DEFAULT_MAX_CONCURRENCY = 1
SWITCH_INTERVAL_S = 0.0005  # see the lifespan
WARM_UP_PASTE = (
    'Traceback (most recent call last):\n  File "train.py", line 1, in <module>\n    loss.backward()\n'
    "RuntimeError: grad can be implicitly created only for scalar outputs\n"
)
DEFAULT_QUEUE = 128
DEFAULT_TIMEOUT_S = 10.0
DEFAULT_MAX_CONNECTIONS = 512
ADMIN_TIMEOUT_S = 30.0  # GET /v1/gaps: reading and clustering the gap log (3 s budget) and the nearest entries
DEFAULT_KEEP_ALIVE_S = 5
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

ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorResponse, "description": "Unknown id or route"},
    413: {"model": ErrorResponse, "description": "Request body larger than 1 MiB"},
    422: {"model": ErrorResponse, "description": "Malformed JSON, wrong types or values out of range"},
}
EXPLAIN_ERRORS = ERRORS | {
    503: {
        "model": ErrorResponse,
        "description": "Overloaded (too many explanations waiting) or not answered in time; retry later",
    },
}


class Unavailable(Exception):
    """An explanation refused (``overloaded``) or not finished in time (``timeout``): 503."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class ExplainPool:
    """Explanations off the event loop: ``max_concurrency`` threads, at most ``queue`` more waiting.

    ``pending`` is only read and written on the event loop, so it needs no lock. A request that would
    exceed the bound is refused at once (no unbounded queue); one that waits past ``timeout`` is
    answered 503 and its queued work cancelled (work already running ends within the core's budget).
    """

    def __init__(
        self,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
        queue: int = DEFAULT_QUEUE,
        timeout: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self.max_concurrency = max(1, int(max_concurrency))
        self.limit = self.max_concurrency + max(0, int(queue))
        self.timeout = float(timeout)
        self.pending = 0
        self.executor = ThreadPoolExecutor(max_workers=self.max_concurrency, thread_name_prefix="tbx-explain")

    async def run(self, fn, *args):
        if self.pending >= self.limit:
            raise Unavailable("overloaded", f"too many explanations in progress ({self.limit}); retry in a moment")
        self.pending += 1
        try:
            future = asyncio.get_running_loop().run_in_executor(self.executor, fn, *args)
            try:
                return await asyncio.wait_for(future, self.timeout)
            except TimeoutError:
                raise Unavailable(
                    "timeout", f"the explanation was not ready within {self.timeout:g} s; retry in a moment"
                ) from None
        finally:
            self.pending -= 1

    def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)


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


def _explain(body: ExplainRequest, index: Index, accept_language: str | None, recorder=None) -> dict:
    from explainer.render.markdown import rendered_json

    answer = explain_text(body.text, index, top=body.top)
    if recorder is not None:
        recorder.submit(answer, body.text, index)  # a queue put: the store is written off this thread
    lang = resolve_lang(body.lang, answer.parsed.lang_hint, accept_language)
    return rendered_json(answer, index, lang=lang, formats=body.render) | {"lang": lang}


# --- routes -----------------------------------------------------------------------------------


@router.post("/v1/explain", response_model=ExplainResponse, responses=EXPLAIN_ERRORS, tags=["explain"])
async def explain(body: ExplainRequest, request: Request, index: Index = Depends(get_index)) -> JSONResponse:
    """Explain a pasted traceback: the `tbx explain --json` result, each match rendered as Markdown
    and HTML in the asked language with its fix templates filled. An explanation that ran out of its
    time budget carries `"partial": true`; 503 when the service is overloaded."""
    accept = request.headers.get("accept-language")
    try:
        return JSONResponse(await request.app.state.pool.run(_explain, body, index, accept, request.app.state.recorder))
    except Unavailable as exc:
        return error_response(503, str(exc), code=exc.code, headers={"Retry-After": "1"})


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
    q: str = Query(
        min_length=1,
        max_length=MAX_QUERY_CHARS,
        description="Words in English or Chinese, or a pasted message fragment.",
    ),
    lang: SearchLang = Query("both"),
    limit: int = Query(10, ge=1, le=MAX_SEARCH_LIMIT),
    index: Index = Depends(get_index),
) -> JSONResponse:
    """Ranked full-text search over titles, summaries, explanations, causes and messages."""
    return JSONResponse({"results": index.search(q, lang=lang, limit=limit)})


@router.get("/v1/gaps", include_in_schema=False)
async def gaps(
    request: Request, top: int = 20, since: str | None = None, index: Index = Depends(get_index)
) -> JSONResponse:
    """The gap log's clusters (``tbx gaps --json``), for the service's admin: 404 unless
    ``TBX_ADMIN_TOKEN`` is set, 401 without ``Authorization: Bearer <that token>``."""
    import hmac

    token = os.environ.get(ADMIN_TOKEN_ENV, "")
    if not token:
        return error_response(404, "not found", code="not_found")
    given = request.headers.get("authorization", "")
    if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
        return error_response(
            401, "a valid admin token is required", code="unauthorized", headers={"WWW-Authenticate": "Bearer"}
        )
    if since is not None and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", since):
        return error_response(422, "since takes a day as YYYY-MM-DD", code="invalid_request")

    def read() -> dict:
        from explainer.surfaces.gaps import Store, clusters, nearest

        found = clusters(Store().rows(since))
        top_n = found[: max(1, min(top, 200))]
        for c in top_n:
            c["nearest"] = nearest(c, index)
        return {"clusters": top_n, "total": sum(c["count"] for c in found)}

    try:
        return JSONResponse(await request.app.state.admin_pool.run(read))  # never in the explanations' queue
    except Unavailable as exc:
        return error_response(503, str(exc), code=exc.code, headers={"Retry-After": "1"})


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


ADMIN_TOKEN_ENV = "TBX_ADMIN_TOKEN"
RECORD_GAPS_ENV = "TBX_RECORD_GAPS"


def cors_origins_from_env() -> list[str]:
    return [o.strip() for o in os.environ.get(CORS_ENV, "").split(",") if o.strip()]


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("traceback-explainer")
    except Exception:  # noqa: BLE001 - a source checkout that was never installed
        from explainer._version import __version__

        return __version__


class NoSniffMiddleware:
    """``X-Content-Type-Options: nosniff`` on every response (JSON, errors, pages, static files)."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_header(message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"x-content-type-options"]
                message = {**message, "headers": headers + [(b"x-content-type-options", b"nosniff")]}
            await send(message)

        await self.app(scope, receive, send_with_header)


def create_app(
    index_factory: Callable[[], Index] = open_index,
    *,
    cors_origins: list[str] | None = None,
    max_body: int = MAX_BODY_BYTES,
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
    queue: int = DEFAULT_QUEUE,
    timeout: float = DEFAULT_TIMEOUT_S,
    record_gaps: bool | None = None,
) -> FastAPI:
    """The app. ``cors_origins``: None reads ``TBX_CORS_ORIGINS``; empty means CORS off (default).
    ``record_gaps``: None reads ``TBX_RECORD_GAPS`` (set by ``tbx serve --record-gaps``); off by default.
    ``max_concurrency``, ``queue`` and ``timeout`` bound the explanations (:class:`ExplainPool`)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        index = index_factory()
        # the matcher built, its expressions compiled and the rendering imported now, not during the
        # first requests (each would hold the interpreter's lock, /healthz waiting behind it)
        index.matcher.warm()
        _explain(ExplainRequest(text=WARM_UP_PASTE, lang="auto", top=3), index, None)
        # the index's hundred thousand long-lived objects out of the collector's way: a full
        # collection otherwise walks them all while every thread waits
        gc.collect()
        gc.freeze()
        app.state.index = index
        app.state.pool = ExplainPool(max_concurrency, queue, timeout)
        # the gap log's clustering (bounded in time, see explainer.surfaces.gaps.clusters) on a thread of its
        # own, one at a time: a large log never holds a thread explanations wait for
        app.state.admin_pool = ExplainPool(1, 0, ADMIN_TIMEOUT_S)
        # explanations are CPU-bound Python in threads: with Python's default 5 ms switch interval
        # the event loop waits that long for the lock each time it has a request to read or answer
        # (/healthz among them); a shorter interval keeps it responsive for a little switching
        previous_interval = sys.getswitchinterval()
        sys.setswitchinterval(SWITCH_INTERVAL_S)
        record = record_gaps if record_gaps is not None else os.environ.get(RECORD_GAPS_ENV, "") == "1"
        if record:
            from explainer.surfaces.gaps import Recorder

            app.state.recorder = Recorder()
        else:
            app.state.recorder = None
        access = logging.getLogger("uvicorn.access")
        quiet = _NoQueryInAccessLog()
        access.addFilter(quiet)
        try:
            yield
        finally:
            access.removeFilter(quiet)
            sys.setswitchinterval(previous_interval)
            gc.unfreeze()  # an app built again in the same process (tests) starts from a clean collector
            app.state.pool.close()
            app.state.admin_pool.close()
            if app.state.recorder is not None:
                app.state.recorder.flush()  # what was answered is recorded before the process ends

    app = FastAPI(
        title="traceback-explainer",
        version=_version(),
        summary="Paste a PyTorch traceback, get what went wrong, where in your code, and a verified fix, in English or Chinese.",
        lifespan=lifespan,
        default_response_class=JSONResponse,
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
            CORSMiddleware,
            allow_origins=origins,
            allow_methods=["GET", "POST"],
            allow_headers=["content-type", "accept-language"],
            max_age=600,
        )
    app.add_middleware(CatchAllMiddleware)
    app.add_middleware(NoSniffMiddleware)  # outermost: also on the catch-all's 500
    return app


_ENV_LIMITS = {
    "max_concurrency": ("TBX_MAX_CONCURRENCY", int),
    "queue": ("TBX_QUEUE", int),
    "timeout": ("TBX_TIMEOUT", float),
}


def app_factory() -> FastAPI:
    """For ``uvicorn --factory explainer.api.app:app_factory`` and multi-worker ``tbx serve`` (which passes its
    limits to the worker processes in ``TBX_MAX_CONCURRENCY``, ``TBX_QUEUE``, ``TBX_TIMEOUT``)."""
    limits = {k: conv(os.environ[env]) for k, (env, conv) in _ENV_LIMITS.items() if os.environ.get(env)}
    return create_app(**limits)


def serve(
    host: str = "127.0.0.1",
    port: int = 8000,
    workers: int = 1,
    *,
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
    queue: int = DEFAULT_QUEUE,
    timeout: float = DEFAULT_TIMEOUT_S,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
    keep_alive: float = DEFAULT_KEEP_ALIVE_S,
    record_gaps: bool = False,
) -> None:
    """``tbx serve``: uvicorn with one app per worker process, each opening the index read-only.

    Limits: ``max_concurrency`` explanations at once and ``queue`` waiting per process, ``timeout``
    seconds per explanation request (then 503); uvicorn's ``limit_concurrency`` caps connections
    and tasks (``max_connections``, answered 503 by uvicorn beyond), and ``timeout_keep_alive``
    closes idle keep-alive connections after ``keep_alive`` seconds; the protocol
    (:mod:`explainer.api.protocol`) closes a connection that sends no whole request head in time or
    a body too slowly, and lets idle connections make room for new ones."""
    import uvicorn

    limits: dict[str, Any] = {
        "limit_concurrency": max_connections,
        "timeout_keep_alive": min(keep_alive, timeout),
        "http": "explainer.api.protocol:GuardedH11Protocol",
    }
    if record_gaps:
        os.environ[RECORD_GAPS_ENV] = "1"  # every worker process records
    if workers > 1:
        for key, (env, _conv) in _ENV_LIMITS.items():
            os.environ[env] = str({"max_concurrency": max_concurrency, "queue": queue, "timeout": timeout}[key])
        uvicorn.run("explainer.api.app:app_factory", factory=True, host=host, port=port, workers=workers, **limits)
    else:
        app = create_app(max_concurrency=max_concurrency, queue=queue, timeout=timeout)
        uvicorn.run(app, host=host, port=port, **limits)
