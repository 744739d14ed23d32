"""The HTTP API under load: explanations off the event loop, 503 in the one error shape when
overloaded or late, /healthz fast meanwhile, `top` an integer in the schema and in validation,
`X-Content-Type-Options: nosniff` everywhere, and `tbx serve`'s limits."""

from __future__ import annotations

import asyncio
import threading
import time
import warnings

import pytest

pytest.importorskip("fastapi", reason="the API needs the `api` extra (fastapi, uvicorn)")
pytest.importorskip("httpx", reason="the API tests need httpx")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

import explainer.api.app as app_module
from explainer.api.app import ExplainPool, Unavailable, create_app
from explainer.budget import Budget

from .test_api import MATMUL, SEED, TINY, assert_error, tiny_index


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return tiny_index(tmp_path_factory, TINY)


def _slow_explain(monkeypatch, seconds: float, started: threading.Event | None = None):
    real = app_module._explain

    def slow(*args):
        if started is not None:
            started.set()
        time.sleep(seconds)
        return real(*args)

    monkeypatch.setattr(app_module, "_explain", slow)


def test_overload_is_503_in_the_error_shape(tiny, monkeypatch):
    _slow_explain(monkeypatch, 0.5)
    app = create_app(lambda: tiny, cors_origins=[], max_concurrency=1, queue=0)
    with TestClient(app) as client:
        results = []
        threads = [
            threading.Thread(target=lambda: results.append(client.post("/v1/explain", json={"text": SEED})))
            for _ in range(4)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    codes = sorted(r.status_code for r in results)
    assert codes.count(200) >= 1 and 503 in codes, codes
    for r in results:
        if r.status_code == 503:
            err = assert_error(r, 503, "overloaded")
            assert r.headers["retry-after"] == "1" and err["message"]


def test_a_request_past_the_timeout_is_503(tiny, monkeypatch):
    _slow_explain(monkeypatch, 1.0)
    with TestClient(create_app(lambda: tiny, cors_origins=[], timeout=0.2)) as client:
        r = client.post("/v1/explain", json={"text": SEED})
    assert_error(r, 503, "timeout")


def test_healthz_stays_fast_while_explanations_run(tiny, monkeypatch):
    started = threading.Event()
    _slow_explain(monkeypatch, 1.5, started)
    with TestClient(create_app(lambda: tiny, cors_origins=[])) as client:
        slow = threading.Thread(target=lambda: client.post("/v1/explain", json={"text": SEED}))
        slow.start()
        assert started.wait(10)
        t0 = time.perf_counter()
        r = client.get("/healthz")
        elapsed = time.perf_counter() - t0
        slow.join()
    assert r.status_code == 200 and elapsed < 0.5, elapsed  # the explanation holds a thread, not the loop


def test_pool_bounds_waiting_work():
    async def scenario():
        pool = ExplainPool(max_concurrency=1, queue=1, timeout=5)
        try:
            jobs = [asyncio.ensure_future(pool.run(time.sleep, 0.3)) for _ in range(3)]
            return await asyncio.gather(*jobs, return_exceptions=True)
        finally:
            pool.close()

    results = asyncio.run(scenario())
    refused = [r for r in results if isinstance(r, Unavailable)]
    assert len(refused) == 1 and refused[0].code == "overloaded"


def test_partial_answers_say_so(tiny, monkeypatch):
    import explainer.match.explain as core

    real = core.explain_text

    def spent():  # a deadline already passed and noticed: the answer is partial whatever is left to do
        b = Budget(0.0)
        b.spent()
        return b

    monkeypatch.setattr(
        app_module, "explain_text", lambda text, index, top=3: real(text, index, top=top, budget=spent())
    )
    with TestClient(create_app(lambda: tiny, cors_origins=[])) as client:
        data = client.post("/v1/explain", json={"text": MATMUL}).json()
    assert data["partial"] is True and {"parsed", "matches", "abstained", "ambiguous", "lang"} <= set(data)


def test_top_is_an_integer_in_the_schema_and_in_validation(tiny):
    with TestClient(create_app(lambda: tiny, cors_origins=[])) as client:
        spec = client.get("/openapi.json").json()
        top = spec["components"]["schemas"]["ExplainRequest"]["properties"]["top"]
        assert top["type"] == "integer" and top["minimum"] == 1 and top["maximum"] == 10
        # JSON Schema counts 10.0 as an integer: so does the API
        r = client.post("/v1/explain", json={"text": MATMUL, "top": 10.0})
        assert r.status_code == 200, r.text
        r1 = client.post(
            "/v1/explain", content=b'{"text": "x", "top": 1e0}', headers={"content-type": "application/json"}
        )
        assert r1.status_code == 200, r1.text
        for bad in (2.5, 10.5, 11.0, 0.0, True, "3"):
            assert_error(client.post("/v1/explain", json={"text": "x", "top": bad}), 422)


@pytest.mark.parametrize(
    "method,path,body",
    [
        ("get", "/healthz", None),
        ("get", "/v1/entries", None),
        ("get", "/v1/entries/nope", None),
        ("post", "/v1/explain", {"text": SEED}),
        ("post", "/v1/explain", {"text": ""}),
        ("get", "/nowhere", None),
        ("get", "/", None),
        ("get", "/openapi.json", None),
        ("get", "/v1/search?q=grad", None),
        ("get", "/static/app.js", None),
    ],
)
def test_every_response_says_nosniff(tiny, method, path, body):
    with TestClient(create_app(lambda: tiny, cors_origins=[])) as client:
        r = getattr(client, method)(path, **({"json": body} if body is not None else {}))
    assert r.headers.get("x-content-type-options") == "nosniff", (path, r.status_code)
    assert r.headers.get_list("x-content-type-options") == ["nosniff"]


def test_nosniff_on_a_500_too(tiny):
    app = create_app(lambda: tiny, cors_origins=[])

    @app.get("/boom")
    async def boom():
        raise RuntimeError("x")

    with TestClient(app, raise_server_exceptions=False) as client:
        r = client.get("/boom")
    assert r.status_code == 500 and r.headers.get("x-content-type-options") == "nosniff"


def test_serve_passes_its_limits_to_uvicorn(monkeypatch):
    import uvicorn

    seen = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: seen.update(kw, app=app))
    app_module.serve(port=9, max_concurrency=3, queue=7, timeout=2.5, max_connections=99)
    assert seen["limit_concurrency"] == 99 and seen["timeout_keep_alive"] == 2.5
    app_module.serve(port=9, workers=2, max_concurrency=3, queue=7, timeout=30, max_connections=50)
    assert seen["app"] == "explainer.api.app:app_factory" and seen["workers"] == 2 and seen["timeout_keep_alive"] == 5
    import os

    try:
        assert os.environ["TBX_MAX_CONCURRENCY"] == "3" and os.environ["TBX_QUEUE"] == "7"
        assert app_module.app_factory  # the worker processes build their app from these
    finally:
        for k in ("TBX_MAX_CONCURRENCY", "TBX_QUEUE", "TBX_TIMEOUT"):
            os.environ.pop(k, None)


def test_tbx_serve_options_and_defaults():
    from explainer.surfaces.cli import build_parser

    args = build_parser().parse_args(["serve"])
    assert (args.max_concurrency, args.queue, args.timeout, args.max_connections) == (1, 128, 10.0, 512)
    args = build_parser().parse_args(["serve", "--max-concurrency", "2", "--timeout", "3"])
    assert args.max_concurrency == 2 and args.timeout == 3.0
    assert (
        app_module.DEFAULT_MAX_CONCURRENCY,
        app_module.DEFAULT_QUEUE,
        app_module.DEFAULT_TIMEOUT_S,
        app_module.DEFAULT_MAX_CONNECTIONS,
    ) == (1, 128, 10.0, 512)  # the CLI's defaults are the app's


def test_tbx_serve_rejects_bad_limits():
    from explainer.surfaces.cli import main

    assert main(["serve", "--max-concurrency", "0"]) == 2
    assert main(["serve", "--timeout", "0"]) == 2


@pytest.mark.slow  # a real `tbx serve`, 600 sockets, slow clients: about 15 s
def test_idle_and_slow_clients_do_not_take_the_server_down(tmp_path):
    """600 connections that never send a byte, a client sending its headers a byte at a time and one
    sending its body a byte at a time: /healthz stays fast, explanations succeed, the idle sockets are
    closed (the oldest as new ones come, the rest at the head deadline)."""
    import os
    import select
    import socket
    import statistics
    import subprocess
    import sys

    import httpx

    from explainer.api import protocol
    from explainer.api.threaded import free_port

    from .conftest import ROOT

    port = free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen(
        [sys.executable, "-m", "explainer", "serve", "--port", str(port)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    idle: list[socket.socket] = []
    stop = threading.Event()

    def trickle(head: bytes, body: bytes) -> None:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(head)
            for b in body:
                if stop.wait(0.3):
                    return
                try:
                    s.sendall(bytes([b]))
                except OSError:
                    return  # closed by the server: what it should do

    try:
        deadline = time.monotonic() + 90
        while True:
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
            try:
                httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2)
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline, "tbx serve did not answer"
                time.sleep(0.2)
        for _ in range(600):
            idle.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        slow = [
            threading.Thread(target=trickle, args=(b"", b"GET /healthz HTTP/1.1\r\nHost: x\r\n" * 20), daemon=True),
            threading.Thread(
                target=trickle,
                args=(
                    b"POST /v1/explain HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n",
                    b'{"text": "' + b"x" * 380,
                ),
                daemon=True,
            ),
        ]
        for t in slow:
            t.start()
        times = []
        with httpx.Client(timeout=5) as client:
            for i in range(25):
                t0 = time.perf_counter()
                with socket.create_connection(("127.0.0.1", port), timeout=5) as s:  # a new connection each time
                    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    got = b""
                    while chunk := s.recv(4096):
                        got += chunk
                times.append(time.perf_counter() - t0)
                assert got.startswith(b"HTTP/1.1 200"), got[:200]
                if i % 5 == 0:
                    r = client.post(f"http://127.0.0.1:{port}/v1/explain", json={"text": SEED})
                    assert r.status_code == 200 and r.json()["matches"], r.text
                time.sleep(0.1)
        print(
            f"/healthz under 600 idle sockets: median {statistics.median(times) * 1000:.1f} ms, max {max(times) * 1000:.1f} ms"
        )
        assert statistics.median(times) < 0.1 and max(times) < 1.0, times
        # every idle socket is closed by the server: evicted for newer ones, or at the head deadline
        closed, wait_until = set(), time.monotonic() + protocol.HEAD_TIMEOUT_S + 5
        while len(closed) < len(idle) and time.monotonic() < wait_until:
            ready, _, _ = select.select([s for s in idle if s.fileno() not in closed], [], [], 0.5)
            for s in ready:
                try:
                    if s.recv(1) == b"":
                        closed.add(s.fileno())
                except OSError:
                    closed.add(s.fileno())
        assert len(closed) == len(idle), f"{len(idle) - len(closed)} idle sockets still open"
    finally:
        stop.set()
        for s in idle:
            s.close()
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


def _value_for(schema: dict, rnd):
    """A value for one schema: mostly a valid one at its edges (so that requests get past validation
    into the explainer), else a wrong type or shape of the kind that breaks servers."""
    from .fuzz import ESCAPES, RAW, seeds, wrap

    t = schema.get("type")
    valid: list = []
    if "enum" in schema:
        valid += list(schema["enum"])
    elif t == "integer":
        lo, hi = int(schema.get("minimum", 0)), int(schema.get("maximum", 100))
        valid += [lo, hi, (lo + hi) // 2, float(hi)]
    elif t == "string":
        cap = schema.get("maxLength", 100)
        base = rnd.choice(seeds())
        valid += [
            base[:cap],
            wrap(rnd.choice(seeds()), rnd)[:cap],  # inside a decoder's JSON, escapes spliced in
            wrap(rnd.choice(seeds()), rnd)[:cap],
            "".join(rnd.choice(ESCAPES) for _ in range(20)),
            "".join(rnd.choice(RAW) for _ in range(20)),
            "\x00" * 10,
            "../" * 20 + "etc/passwd",
            "%00%ff%2e%2e",
        ]
    invalid: list = [None, True, -1, 2**63, 1e308, float("nan"), "", [], {}, "x" * 5000]
    if "enum" in schema:
        invalid += [str(schema["enum"][0]).upper(), " " + str(schema["enum"][0])]
    if t == "integer":
        invalid += [int(schema.get("minimum", 0)) - 1, int(schema.get("maximum", 100)) + 1, "3", 2.5]
    if t == "string":
        invalid += ["a" * (schema.get("maxLength", 100) + 1)]
    return rnd.choice(valid if valid and rnd.random() < 0.75 else invalid)


def test_schema_driven_fuzz_never_answers_5xx(tiny):
    """Every operation of the published schema, called with values drawn from each parameter's and
    body field's schema (edges, one past them, wrong types, surrogates, NUL, escapes), plus malformed
    bodies: never a 5xx, always the one error shape."""
    import json
    import random
    from urllib.parse import quote

    from fastapi.testclient import TestClient

    from .fuzz import seeds

    rnd = random.Random(30)
    app = create_app(lambda: tiny, cors_origins=[])
    spec = app.openapi()
    schemas = spec["components"]["schemas"]
    calls = 0
    bad = []
    with TestClient(app, raise_server_exceptions=False) as client:
        for path, ops in spec["paths"].items():
            for method, op in ops.items():
                params = op.get("parameters", [])
                body_ref = (
                    op.get("requestBody", {})
                    .get("content", {})
                    .get("application/json", {})
                    .get("schema", {})
                    .get("$ref")
                )
                body_schema = schemas[body_ref.rsplit("/", 1)[1]] if body_ref else None
                for _ in range(300 if body_schema else 100):
                    url, query = path, []
                    for p in params:
                        if rnd.random() < 0.15 and p["in"] != "path":
                            continue  # left out
                        v = str(_value_for(p.get("schema", {}), rnd))[:3000].encode("utf-8", "surrogatepass")
                        if p["in"] == "path":
                            url = url.replace("{" + p["name"] + "}", quote(v[:300], safe="") or "x")
                        else:
                            query.append(f"{p['name']}={quote(v, safe='')}")
                    if query:
                        url += "?" + "&".join(query)
                    kwargs: dict = {}
                    if body_schema is not None:
                        props = body_schema.get("properties", {})
                        shape = rnd.random()
                        if shape < 0.8:
                            body = {k: _value_for(s, rnd) for k, s in props.items() if rnd.random() < 0.9}
                            if rnd.random() < 0.1:
                                body["extra"] = 1
                            raw = json.dumps(body, ensure_ascii=rnd.random() < 0.5, allow_nan=True)
                        elif shape < 0.9:
                            raw = rnd.choice(
                                ['{"text": "a"', "[]", "null", '"text"', '{"text": "\\ud800"}', "\xff\xfe"]
                            )
                        else:
                            raw = json.dumps(rnd.choice(seeds()))
                        kwargs["content"] = raw.encode("utf-8", "surrogatepass")
                        kind = "application/json" if rnd.random() < 0.9 else rnd.choice(["text/plain", ""])
                        kwargs["headers"] = {"content-type": kind}
                    r = client.request(method.upper(), url, **kwargs)
                    calls += 1
                    if r.status_code >= 500 and r.status_code != 503:
                        bad.append(
                            f"{method.upper()} {url} {kwargs.get('content', b'')[:80]!r}: {r.status_code} {r.text[:200]}"
                        )
                    elif r.status_code >= 400:
                        body = r.json()
                        if set(body) != {"error"} or not {"code", "message"} <= set(body["error"]):
                            bad.append(
                                f"{method.upper()} {url}: {r.status_code} not in the error shape: {r.text[:200]}"
                            )
    assert calls >= 700
    assert not bad, "\n".join(bad[:10])
