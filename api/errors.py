"""One error shape for every error the API answers: ``{"error": {"code": str, "message": str}}``.

FastAPI's own handlers answer ``{"detail": ...}``; the handlers here replace them. Two pure ASGI
middlewares complete the picture:

* :class:`BodyLimitMiddleware` caps the request body while it is read (uvicorn sets no limit, and a
  chunked body has no ``Content-Length`` to check up front): 413 beyond the cap.
* :class:`CatchAllMiddleware` turns any exception that escapes a route into a JSON 500 without
  internals, and logs only the exception's type and where it was raised, never its message: the
  message of an exception raised while reading a paste may quote the paste, and pastes are never
  logged or stored.
"""

from __future__ import annotations

import json
import logging
import traceback
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from pydantic_core import PydanticSerializationError, to_json
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse as _StarletteJSON
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from explainer.textio import valid_unicode

log = logging.getLogger("explainer.api")

MAX_VALIDATION_ERRORS = 5  # how many field problems a 422 message lists

CODES = {
    400: "malformed_request",
    404: "not_found",
    405: "method_not_allowed",
    413: "body_too_large",
    415: "unsupported_media_type",
    422: "invalid_request",
    500: "internal_error",
    503: "unavailable",
}


class JSONResponse(_StarletteJSON):
    """Starlette's JSON response whose encoding cannot fail: a character UTF-8 cannot hold (a lone
    surrogate that reached an answer some way the decoders did not see) is written as U+FFFD's
    bytes, never a 500."""

    def render(self, content: Any) -> bytes:
        try:  # pydantic's serialiser (Rust, a dependency of FastAPI's): a tenth of json.dumps' time
            return to_json(content, inf_nan_mode="null")
        except (PydanticSerializationError, TypeError, ValueError):
            pass  # a lone surrogate (or anything it cannot write): the careful way below
        text = json.dumps(content, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":"))
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:
            return valid_unicode(text).encode("utf-8")


def error_body(code: str, message: str, **extra: Any) -> dict:
    return {"error": {"code": code, "message": message, **extra}}


def error_response(
    status: int, message: str, *, code: str | None = None, headers: dict | None = None, **extra: Any
) -> JSONResponse:
    return JSONResponse(
        error_body(code or CODES.get(status, "error"), message, **extra), status_code=status, headers=headers
    )


class BodyTooLarge(StarletteHTTPException):
    """Raised from the wrapped ``receive`` once the body passes the cap; answered as 413."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"the request body is larger than {limit} bytes")


def _loc(loc: tuple | list) -> str:
    return ".".join(str(p) for p in loc) or "body"


async def validation_handler(request: Request, exc: RequestValidationError) -> JSONResponse:
    # Only locations and messages: pydantic's ``input`` would echo the paste back (and into any log).
    problems = [{"loc": _loc(e.get("loc", ())), "msg": str(e.get("msg", "invalid"))} for e in exc.errors()]
    shown = "; ".join(f"{p['loc']}: {p['msg']}" for p in problems[:MAX_VALIDATION_ERRORS])
    if len(problems) > MAX_VALIDATION_ERRORS:
        shown += f"; and {len(problems) - MAX_VALIDATION_ERRORS} more"
    return error_response(422, shown or "invalid request", details=problems[:MAX_VALIDATION_ERRORS])


async def http_exception_handler(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    status = exc.status_code
    if status == 400:
        # FastAPI answers 400 when the body is not decodable (bad UTF-8, a number too long to convert,
        # nesting too deep): for this API that is a malformed request, which is 422.
        return error_response(422, "the request body is not valid JSON", code="malformed_request")
    if status == 404:
        message = (
            exc.detail if isinstance(exc.detail, str) and exc.detail != "Not Found" else f"no route {request.url.path}"
        )
    elif isinstance(exc.detail, str):
        message = exc.detail
    else:
        message = json.dumps(exc.detail, ensure_ascii=False, default=str)
    headers = getattr(exc, "headers", None)
    if status >= 500:  # never reached from input; keep internals out all the same
        return error_response(status, "internal error", code="internal_error")
    return error_response(status, message, headers=headers)


def install_handlers(app: FastAPI) -> None:
    # Starlette types a handler's exception as Exception, so no handler of a subclass fits (starlette#2417)
    app.add_exception_handler(RequestValidationError, validation_handler)  # type: ignore[arg-type]
    app.add_exception_handler(StarletteHTTPException, http_exception_handler)  # type: ignore[arg-type]


class BodyLimitMiddleware:
    """Answer 413 for a body over ``max_body`` bytes, counted while the stream is read."""

    def __init__(self, app: ASGIApp, max_body: int) -> None:
        self.app = app
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = 0
                if declared > self.max_body:
                    await error_response(413, str(BodyTooLarge(self.max_body).detail))(scope, receive, send)
                    return
                break
        received = 0
        limit = self.max_body

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise BodyTooLarge(limit)
            return message

        tracking_send, state = _tracking(send)
        try:
            await self.app(scope, limited_receive, tracking_send)
        except BodyTooLarge as exc:  # read outside a FastAPI route (which answers it itself)
            if state["started"]:
                raise
            await error_response(413, str(exc.detail))(scope, receive, send)


def _tracking(send: Send):
    """``send`` that remembers whether the response has started (then no error answer can follow)."""
    state = {"started": False}

    async def tracking_send(message: Message) -> None:
        if message["type"] == "http.response.start":
            state["started"] = True
        await send(message)

    return tracking_send, state


class CatchAllMiddleware:
    """The last line: any exception becomes a JSON 500 that says nothing about internals."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        tracking_send, state = _tracking(send)
        try:
            await self.app(scope, receive, tracking_send)
        except Exception as exc:  # noqa: BLE001 - this is the catch-all
            # file:line in function only: source lines and the message might quote the request
            where = " <- ".join(
                f"{f.filename}:{f.lineno} in {f.name}" for f in reversed(traceback.extract_tb(exc.__traceback__)[-3:])
            )
            log.error(
                "unhandled %s in %s %s at %s (message withheld: it may quote the request)",
                type(exc).__name__,
                scope.get("method"),
                scope.get("path"),
                where,
            )
            if not state["started"]:
                await error_response(500, "internal error; nothing of the request was stored", code="internal_error")(
                    scope, receive, send
                )
