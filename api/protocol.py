"""uvicorn's h11 protocol with the limits uvicorn leaves out: no connection waits for its request
for ever, and idle connections cannot fill the server.

uvicorn's ``limit_concurrency`` counts every open connection, and a connection that never sends a
byte is never closed (its keep-alive timer starts only after a response): 512 idle sockets made
``tbx serve`` answer 503 to everything, ``/healthz`` included. Here a connection is *waiting* while it
has no request head in progress (just opened, or between two requests on keep-alive), and:

* it must send a whole request head within ``HEAD_TIMEOUT_S`` of starting to wait (a client that
  sends its headers a byte at a time is closed as one that sends nothing);
* a request's body must arrive within ``BODY_TIMEOUT_S`` of its head (a slow-body client is closed;
  the app sees a disconnect);
* at most ``WAITING_PER_CLIENT`` connections of one client address, and ``MAX_WAITING`` in all, wait
  at once: a new connection past either closes the oldest waiting one (of that client first), so new
  clients, a load balancer's ``/healthz`` among them, always get in and idle ones make room.

A connection whose request is being answered is never closed by these rules.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

HEAD_TIMEOUT_S = 10.0
BODY_TIMEOUT_S = 30.0
WAITING_PER_CLIENT = 64
MAX_WAITING = 256

# per process (one event loop): every waiting connection, oldest first, and per client address
_waiting: OrderedDict[GuardedH11Protocol, None] = OrderedDict()
_by_client: dict[str, OrderedDict[GuardedH11Protocol, None]] = {}


class GuardedH11Protocol(H11Protocol):
    _timer: asyncio.TimerHandle | None = None
    _host: str = ""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._host = self.client[0] if self.client else ""
        self._start_waiting()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        self._cancel_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        state = self.conn.their_state
        if state is h11.IDLE:
            return  # still (part of) a request head: the head's deadline runs on
        if self in _waiting:
            self._stop_waiting()
            if state is h11.SEND_BODY:
                self._arm(BODY_TIMEOUT_S)  # once per request: the whole body within this
                return
        if state is not h11.SEND_BODY:
            self._cancel_timer()  # the request is whole: it is being answered

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._start_waiting()  # keep-alive: waiting for the next request head

    # --- waiting ---------------------------------------------------------------------------------

    def _start_waiting(self) -> None:
        peers = _by_client.setdefault(self._host, OrderedDict())
        while len(peers) >= WAITING_PER_CLIENT:
            next(iter(peers))._evict()
        while len(_waiting) >= MAX_WAITING:
            next(iter(_waiting))._evict()
        _waiting[self] = None
        peers[self] = None
        self._arm(HEAD_TIMEOUT_S)

    def _stop_waiting(self) -> None:
        _waiting.pop(self, None)
        peers = _by_client.get(self._host)
        if peers is not None:
            peers.pop(self, None)
            if not peers:
                del _by_client[self._host]

    def _evict(self) -> None:
        self._stop_waiting()
        self._close()

    def _arm(self, seconds: float) -> None:
        self._cancel_timer()
        self._timer = self.loop.call_later(seconds, self._close)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _close(self) -> None:
        self._cancel_timer()
        self._stop_waiting()
        if not self.transport.is_closing():
            self.transport.close()


def waiting() -> dict[str, Any]:
    """How many connections wait, in all and per client (for tests and diagnostics)."""
    return {"total": len(_waiting), "clients": {k: len(v) for k, v in _by_client.items()}}
