"""The HTTP API on a tiny knowledge base: every route, the one error shape, the body cap, no 5xx."""

from __future__ import annotations

import json
import logging
import re
import shutil
import warnings

import pytest

pytest.importorskip("fastapi", reason="the API needs the `api` extra (fastapi, uvicorn)")
pytest.importorskip("httpx", reason="the API tests need httpx")

with warnings.catch_warnings():  # starlette nudges towards httpx2; httpx is what the project pins
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explainer.api.app import PAGE_HEADERS, create_app, get_index
from explainer.api.models import EntryResponse, ExplainResponse, SearchResponse
from explainer.knowledge.index import Index, build_index

from .conftest import FIXTURES, KB

TINY = ("backward-non-scalar-output", "matmul-shape-mismatch")
SEED = (FIXTURES / "pastes" / "seed_flat_windows.txt").read_text(encoding="utf-8")
MATMUL = """Traceback (most recent call last):
  File "/home/ana/proj/model.py", line 41, in forward
    out = self.fc(x)
  File "/usr/lib/python3.11/site-packages/torch/nn/modules/linear.py", line 125, in forward
    return F.linear(input, self.weight, self.bias)
RuntimeError: mat1 and mat2 shapes cannot be multiplied (32x512 and 256x10)
"""
ZH_SEED = "训练时出错了，请帮忙看看：\n" + SEED
NO_5XX = settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)


def tiny_index(tmp_path_factory, ids) -> Index:
    kb = tmp_path_factory.mktemp("kb")
    for entry_id in ids:
        shutil.copy(KB / f"{entry_id}.md", kb / f"{entry_id}.md")
    out = tmp_path_factory.mktemp("idx") / "index.sqlite"
    info = build_index(kb, out)
    assert info["entries"] == len(ids)
    return Index(out)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Index:
    return tiny_index(tmp_path_factory, TINY)


@pytest.fixture(scope="module")
def client(tiny):
    with TestClient(create_app(lambda: tiny, cors_origins=[])) as c:
        yield c


def assert_error(resp, status: int, code: str | None = None) -> dict:
    assert resp.status_code == status, resp.text
    assert resp.headers["content-type"].startswith("application/json")
    body = resp.json()
    assert set(body) == {"error"}, body
    assert isinstance(body["error"]["code"], str) and body["error"]["code"]
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    if code:
        assert body["error"]["code"] == code
    return body["error"]


def post_raw(client, data: bytes, content_type: str = "application/json"):
    return client.post("/v1/explain", content=data, headers={"content-type": content_type})


# --- liveness, entries ------------------------------------------------------------------------


def test_healthz(client):
    r = client.get("/healthz")
    assert r.status_code == 200
    assert r.json() == {"status": "ok", "entries": 2}
    assert client.head("/healthz").status_code == 200  # load balancers probe with HEAD too


def test_list_entries(client):
    r = client.get("/v1/entries")
    assert r.status_code == 200
    rows = r.json()["entries"]
    assert [e["id"] for e in rows] == sorted(TINY)
    assert all(e["title_en"] and e["title_zh"] for e in rows)


def test_read_entry(client):
    r = client.get("/v1/entries/backward-non-scalar-output")
    assert r.status_code == 200
    doc = EntryResponse.model_validate(r.json()).model_dump()
    assert doc["id"] == "backward-non-scalar-output"
    assert "标量" in doc["title"]["zh"] and "scalar" in doc["title"]["en"]
    assert doc["summary"]["en"] and doc["summary"]["zh"] and doc["fixes"]
    assert any(f["template"] for f in doc["fixes"])


def test_unknown_entry_is_404(client):
    assert_error(client.get("/v1/entries/no-such-entry"), 404, "not_found")
    assert_error(client.get("/v1/entries/" + "x" * 201), 422, "invalid_request")  # ids are short


def test_unknown_route_is_404_and_wrong_method_405(client):
    assert_error(client.get("/v2/nothing"), 404, "not_found")
    assert_error(client.delete("/v1/entries"), 405, "method_not_allowed")
    assert_error(client.get("/v1/explain"), 405)


def test_dependency_override_swaps_the_index(tiny, tmp_path_factory):
    one = tiny_index(tmp_path_factory, TINY[:1])
    app = create_app(lambda: tiny)
    app.dependency_overrides[get_index] = lambda: one
    with TestClient(app) as c:
        assert [e["id"] for e in c.get("/v1/entries").json()["entries"]] == [TINY[0]]
        assert c.get("/healthz").json()["entries"] == 1
        assert_error(c.get(f"/v1/entries/{TINY[1]}"), 404)


# --- explain ----------------------------------------------------------------------------------


def test_explain_seed_in_english(client):
    r = client.post("/v1/explain", json={"text": SEED, "lang": "en"})
    assert r.status_code == 200, r.text
    data = r.json()
    ExplainResponse.model_validate(data)
    assert data["lang"] == "en"
    assert data["parsed"]["exc_type"] == "RuntimeError"
    assert data["parsed"]["message"] == "grad can be implicitly created only for scalar outputs"
    assert data["parsed"]["user_frame"]["code"] == "loss.backward()"
    top = data["matches"][0]
    assert top["id"] == "backward-non-scalar-output"
    assert 0 <= top["score"] <= 1 and top["reasons"]
    assert top["title"] == "backward() called on a tensor that is not a scalar"
    assert set(top["rendered"]) >= {"markdown", "html"}
    # the fix template is filled with the user's receiver (`loss`)
    assert "loss.mean().backward()" in top["rendered"]["markdown"]
    assert "<pre><code" in top["rendered"]["html"]


def test_explain_seed_in_chinese_and_both(client):
    zh = client.post("/v1/explain", json={"text": SEED, "lang": "zh"}).json()
    assert zh["lang"] == "zh"
    assert zh["matches"][0]["title"] == "对非标量张量调用 backward()"
    assert "标量" in zh["matches"][0]["rendered"]["html"]
    both = client.post("/v1/explain", json={"text": SEED, "lang": "both"}).json()
    html = both["matches"][0]["rendered"]["html"]
    assert "not a scalar" in html and "非标量" in html


def test_explain_auto_language(client):
    assert client.post("/v1/explain", json={"text": SEED}).json()["lang"] == "en"
    assert client.post("/v1/explain", json={"text": ZH_SEED, "lang": "auto"}).json()["lang"] == "zh"
    r = client.post("/v1/explain", json={"text": SEED}, headers={"accept-language": "zh-CN,zh;q=0.9,en;q=0.8"})
    assert r.json()["lang"] == "zh"
    r = client.post("/v1/explain", json={"text": SEED}, headers={"accept-language": "zh;q=0.2, en-GB"})
    assert r.json()["lang"] == "en"


def test_explain_renders_only_the_formats_asked_for(client):
    """``render`` names the formats each match carries; ``[]`` leaves rendering out (the JSON's own
    fields are the same), the page asks for HTML only."""
    full = client.post("/v1/explain", json={"text": SEED, "lang": "en"}).json()
    bare = client.post("/v1/explain", json={"text": SEED, "lang": "en", "render": []}).json()
    html = client.post("/v1/explain", json={"text": SEED, "lang": "en", "render": ["html"]}).json()
    ExplainResponse.model_validate(bare)
    ExplainResponse.model_validate(html)
    assert "rendered" not in bare["matches"][0]
    assert [{k: v for k, v in m.items() if k != "rendered"} for m in full["matches"]] == bare["matches"]
    r = html["matches"][0]["rendered"]
    assert set(r) == {"html", "short", "rest"} and set(r["short"]) == set(r["rest"]) == {"html"}
    assert r["html"] == full["matches"][0]["rendered"]["html"]
    assert r["short"]["html"] == full["matches"][0]["rendered"]["short"]["html"]
    uncurated = "RuntimeError: linalg.cross: inputs dimension -1 must have length 3. Got 2 and 2"
    longtail = client.post("/v1/explain", json={"text": uncurated, "render": ["markdown"]}).json()
    assert longtail["matches"] == [] and set(longtail["raised_at_rendered"]) == {"markdown"}
    assert "raised_at_rendered" not in client.post("/v1/explain", json={"text": uncurated, "render": []}).json()
    for bad in (["pdf"], "html", ["html", "html", "markdown"]):
        assert_error(client.post("/v1/explain", json={"text": SEED, "render": bad}), 422)


def test_explain_top_and_abstain(client):
    data = client.post("/v1/explain", json={"text": MATMUL, "top": 1}).json()
    assert [m["id"] for m in data["matches"]] == ["matmul-shape-mismatch"]
    nothing = client.post("/v1/explain", json={"text": "hello, this is not a traceback"}).json()
    assert nothing["matches"] == [] and nothing["abstained"] is True


def test_explain_html_escapes_what_the_paste_says(client):
    evil = SEED.replace("loss.backward()", "loss.backward()  # <script>alert(1)</script><img src=x onerror=alert(1)>")
    data = client.post("/v1/explain", json={"text": evil, "lang": "en"}).json()
    html = data["matches"][0]["rendered"]["html"]
    assert "<script" not in html and "<img" not in html
    assert "&lt;script&gt;" in html or "alert" not in html


def test_explain_long_paste_runs_off_the_event_loop(client):
    text = ("noise line\n" * 12000) + MATMUL  # > INLINE_CHARS
    data = client.post("/v1/explain", json={"text": text}).json()
    assert data["matches"][0]["id"] == "matmul-shape-mismatch"


def test_lone_surrogate_is_answered_not_crashed(client):
    r = post_raw(client, b'{"text": "\\ud800 RuntimeError: grad can be implicitly created only for scalar outputs"}')
    assert r.status_code == 200, r.text
    assert r.json()["matches"][0]["id"] == "backward-non-scalar-output"


@pytest.mark.parametrize(
    "paste",
    [
        '{"name": "RuntimeError", "message": "x\\ud800", "stack": "Traceback (most recent call last):\\nRuntimeError: x\\ud800"}',
        '{"ename": "RuntimeError", "evalue": "\\udfff", "traceback": ["RuntimeError: \\udfff"]}',
        '{"exc_info": "Traceback (most recent call last):\\nRuntimeError: grad can be implicitly created only for scalar outputs \\udc00"}',
    ],
)
def test_a_surrogate_the_decoders_make_is_answered_not_crashed(client, paste):
    """The request's text is valid; the parser's JSON decoders turn its escaped \\ud800 into a lone
    surrogate (a 500 when the answer was encoded)."""
    r = client.post("/v1/explain", json={"text": paste})
    assert r.status_code == 200, r.text
    r.content.decode("utf-8")


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"text": ""},
        {"text": 123},
        {"text": ["a"]},
        {"text": None},
        {"text": "x", "top": 0},
        {"text": "x", "top": 11},
        {"text": "x", "top": "3"},
        {"text": "x", "top": True},
        {"text": "x", "top": 2.5},
        {"text": "x", "lang": "fr"},
        {"text": "x", "lang": None},
        {"text": "x", "language": "zh"},  # a misspelled key is an error, not silently ignored
        [],
        "text",
        None,
    ],
    ids=lambda b: json.dumps(b)[:40],
)
def test_explain_rejects_wrong_shapes_with_422(client, body):
    err = assert_error(client.post("/v1/explain", json=body), 422)
    assert err["code"] in ("invalid_request", "malformed_request")


@pytest.mark.parametrize(
    "raw",
    [
        b"{bad json",
        b'{"text": "unterminated',
        b"\xff\xfe\x00garbage",
        b'{"text": "\xc3\x28"}',
        b"[" * 5000,
        b'{"text": "x", "top": ' + b"9" * 5000 + b"}",
        b"",
        b'{"text": "x", "top": NaN}',
        b"Infinity",
        b'{"text": "a", "text": 5}',
    ],
    ids=[
        "syntax",
        "unterminated",
        "binary",
        "bad-utf8",
        "deep",
        "huge-int",
        "empty",
        "nan",
        "infinity",
        "duplicate-key",
    ],
)
def test_explain_malformed_json_is_422(client, raw):
    assert_error(post_raw(client, raw), 422)


def test_explain_validation_message_never_echoes_the_paste(client):
    secret = "SECRET-PASTE-4711"
    err = assert_error(client.post("/v1/explain", json={"text": secret, "top": 99}), 422)
    assert secret not in json.dumps(err)


# --- body cap ---------------------------------------------------------------------------------


def test_body_over_1_mib_is_413(client):
    body = json.dumps({"text": "x" * (1 << 20)}).encode()
    assert_error(post_raw(client, body), 413, "body_too_large")


def test_chunked_body_without_content_length_is_413(client):
    def chunks():
        for _ in range(40):
            yield b" " * 32768  # 1.25 MiB of JSON whitespace, no Content-Length

    r = client.post("/v1/explain", content=chunks(), headers={"content-type": "application/json"})
    assert "content-length" not in {k.lower() for k in r.request.headers}
    assert_error(r, 413, "body_too_large")


def test_body_cap_boundary(tiny):
    with TestClient(create_app(lambda: tiny, max_body=1000)) as c:
        head, tail = b'{"text": "', b'"}'
        exact = head + b"x" * (1000 - len(head) - len(tail)) + tail
        assert len(exact) == 1000
        assert post_raw(c, exact).status_code == 200
        assert_error(post_raw(c, exact + b" "), 413)


def test_chunked_413_over_a_real_socket(tiny):
    """uvicorn sets no body limit: the middleware counts bytes as they arrive."""
    import httpx

    from explainer.api.threaded import ThreadedServer

    def chunks():
        yield b'{"text": "'
        for _ in range(48):
            yield b"x" * 32768

    with ThreadedServer(create_app(lambda: tiny)) as url:
        with httpx.Client(base_url=url, timeout=20) as h:
            try:
                r = h.post("/v1/explain", content=chunks(), headers={"content-type": "application/json"})
            except httpx.HTTPError as exc:  # the server may close before the client finished sending
                pytest.fail(f"no 413 answer: {exc!r}")
            assert r.request.headers.get("transfer-encoding") == "chunked"
            assert_error(r, 413, "body_too_large")
            ok = h.post("/v1/explain", json={"text": SEED})
            assert ok.status_code == 200 and ok.json()["matches"][0]["id"] == TINY[0]


# --- search -----------------------------------------------------------------------------------


def test_search_two_character_chinese(client):
    r = client.get("/v1/search", params={"q": "标量"})
    assert r.status_code == 200
    results = SearchResponse.model_validate(r.json()).results
    assert results and results[0].id == "backward-non-scalar-output"
    assert {"id", "title", "score", "snippet"} <= set(r.json()["results"][0])


def test_search_english_fragment(client):
    results = client.get("/v1/search", params={"q": "shapes cannot be multiplied"}).json()["results"]
    assert results[0]["id"] == "matmul-shape-mismatch"
    only_zh = client.get("/v1/search", params={"q": "标量", "lang": "zh"}).json()["results"]
    assert only_zh and all(r["lang"] == "zh" for r in only_zh)


def test_search_on_the_real_knowledge_base(index):
    app = create_app(lambda: index)
    with TestClient(app) as c:

        def ids(q):
            return [r["id"] for r in c.get("/v1/search", params={"q": q}).json()["results"]]

        # the knowledge base grows; its ranking is the index's concern (tests of the core): here, top 3
        assert "backward-non-scalar-output" in ids("标量")[:3]
        assert "matmul-shape-mismatch" in ids("shapes cannot be multiplied")[:3]
        assert "cuda-out-of-memory" in ids("显存")[:3]
        assert ids("梯度")


@pytest.mark.parametrize(
    "params",
    [{}, {"q": ""}, {"q": "x" * 1001}, {"q": "a", "lang": "fr"}, {"q": "a", "limit": 0}, {"q": "a", "limit": "many"}],
)
def test_search_bad_parameters_are_422(client, params):
    assert_error(client.get("/v1/search", params=params), 422, "invalid_request")


def test_search_with_nothing_searchable(client):
    for q in ("!!!", '"', "*", "NEAR(", "a OR", "-"):
        r = client.get("/v1/search", params={"q": q})
        assert r.status_code == 200 and isinstance(r.json()["results"], list)


# --- pages, docs, CORS ------------------------------------------------------------------------

EXTERNAL = re.compile(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//|@import|url\(\s*["']?(?:https?:)?//""", re.I)


def test_paste_page(client):
    r = client.get("/")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert r.headers["content-security-policy"] == PAGE_HEADERS["Content-Security-Policy"]
    html = r.text
    assert "<textarea" in html and 'value="zh"' in html and 'value="both"' in html
    for asset in re.findall(r'(?:src|href)="(/static/[^"]+)"', html):
        a = client.get(asset)
        assert a.status_code == 200, asset
        assert not EXTERNAL.search(a.text), asset


def test_static_assets_load_nothing_from_outside():
    from explainer.api.app import STATIC_DIR

    names = {p.name for p in STATIC_DIR.iterdir()}
    assert {"index.html", "app.js", "style.css", "docs.html", "docs.js"} <= names
    for p in STATIC_DIR.iterdir():
        assert not EXTERNAL.search(p.read_text(encoding="utf-8")), p.name


def test_docs_work_offline(client):
    r = client.get("/docs")
    assert r.status_code == 200 and "/static/docs.js" in r.text
    assert not EXTERNAL.search(r.text)
    assert client.get("/static/docs.js").status_code == 200
    assert_error(client.get("/redoc"), 404)
    spec = client.get("/openapi.json").json()
    paths = spec["paths"]
    assert {"/v1/explain", "/v1/entries", "/v1/entries/{entry_id}", "/v1/search", "/healthz"} <= set(paths)
    for status in ("404", "413", "422"):
        assert paths["/v1/explain"]["post"]["responses"].get(status) or status == "404"
    assert paths["/v1/explain"]["post"]["responses"]["422"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "/ErrorResponse"
    )
    assert "HTTPValidationError" not in spec["components"]["schemas"]


def test_cors_off_by_default(client):
    r = client.get("/healthz", headers={"origin": "https://evil.example"})
    assert "access-control-allow-origin" not in r.headers
    pre = client.options(
        "/v1/explain", headers={"origin": "https://evil.example", "access-control-request-method": "POST"}
    )
    assert "access-control-allow-origin" not in pre.headers
    assert pre.status_code < 500


def test_cors_configured(tiny, monkeypatch):
    with TestClient(create_app(lambda: tiny, cors_origins=["https://wiki.example"])) as c:
        r = c.get("/healthz", headers={"origin": "https://wiki.example"})
        assert r.headers["access-control-allow-origin"] == "https://wiki.example"
        r = c.get("/healthz", headers={"origin": "https://evil.example"})
        assert "access-control-allow-origin" not in r.headers
        # a 413 from the body cap carries the CORS header too, so a browser can read it
        big = c.post(
            "/v1/explain",
            content=b"x" * ((1 << 20) + 1),
            headers={"origin": "https://wiki.example", "content-type": "application/json"},
        )
        assert big.status_code == 413 and big.headers["access-control-allow-origin"] == "https://wiki.example"
    monkeypatch.setenv("TBX_CORS_ORIGINS", "https://a.example, https://b.example")
    with TestClient(create_app(lambda: tiny)) as c:
        assert (
            c.get("/healthz", headers={"origin": "https://b.example"}).headers["access-control-allow-origin"]
            == "https://b.example"
        )


# --- nothing leaks, nothing breaks -------------------------------------------------------------


def server_lines(caplog) -> str:
    """What the server side logged (httpx, the test's own client, logs the URLs it requests)."""
    return "\n".join(
        f"{r.name} {r.getMessage()} {r.exc_text or ''}"
        for r in caplog.records
        if not r.name.startswith(("httpx", "httpcore"))
    )


class _Broken:
    """An index whose every read fails: the catch-all must still answer the one error shape."""

    entries: dict = {}

    def __getattr__(self, name):
        raise RuntimeError("internal detail SECRET-INDEX-PATH /var/lib/x.sqlite")

    def search(self, query, **kw):
        raise RuntimeError(f"failed on {query}")


def test_catch_all_answers_json_without_internals(tiny, caplog):
    app = create_app(lambda: tiny)
    app.dependency_overrides[get_index] = lambda: _Broken()
    with caplog.at_level(logging.DEBUG), TestClient(app, raise_server_exceptions=False) as c:
        r = c.get("/v1/search", params={"q": "SECRET-QUERY-99"})
        err = assert_error(r, 500, "internal_error")
        assert "SECRET" not in json.dumps(err)
        r = c.post("/v1/explain", json={"text": "SECRET-PASTE-1 RuntimeError: x"})
        assert_error(r, 500, "internal_error")
    server_log = server_lines(caplog)
    assert "SECRET" not in server_log
    assert "RuntimeError" in server_log  # the type and place are logged, the message is not


def test_pastes_are_not_logged(client, caplog):
    secret = "RuntimeError: SECRET-PASTE-31337 mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"
    with caplog.at_level(logging.DEBUG):
        client.post("/v1/explain", json={"text": secret})
        client.post("/v1/explain", json={"text": secret, "top": 0})
        client.get("/v1/search", params={"q": "SECRET-PASTE-31337"})
    assert "SECRET-PASTE" not in server_lines(caplog)


def test_access_log_drops_the_query_string():
    from explainer.api.app import _NoQueryInAccessLog

    rec = logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        __file__,
        1,
        '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5", "GET", "/v1/search?q=SECRET", "1.1", 200),
        None,
    )
    _NoQueryInAccessLog().filter(rec)
    assert "SECRET" not in rec.getMessage() and "/v1/search" in rec.getMessage()


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=50),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5),
    max_leaves=20,
)


@NO_5XX
@given(text=st.text(max_size=3000), lang=st.sampled_from(["en", "zh", "both", "auto", "xx"]), top=st.integers(-2, 12))
def test_property_random_text_never_5xx(client, text, lang, top):
    r = client.post("/v1/explain", json={"text": text, "lang": lang, "top": top})
    assert r.status_code in (200, 422), r.text
    if r.status_code == 422:
        assert_error(r, 422)
    else:
        ExplainResponse.model_validate(r.json())


@NO_5XX
@given(body=json_values)
def test_property_random_json_never_5xx(client, body):
    r = client.post("/v1/explain", json=body)
    assert r.status_code < 500, r.text
    if r.status_code != 200:
        assert_error(r, r.status_code)


@NO_5XX
@given(raw=st.binary(max_size=2000))
def test_property_random_bytes_never_5xx(client, raw):
    r = post_raw(client, raw)
    assert r.status_code < 500, r.text


@NO_5XX
@given(
    prefix=st.sampled_from(["Traceback (most recent call last):\n", "[rank0]: ", "E   ", "```\n", ""]),
    middle=st.text(alphabet=st.characters(codec="utf-8"), max_size=400),
    message=st.sampled_from(
        [
            "RuntimeError: grad can be implicitly created only for scalar outputs",
            "RuntimeError: mat1 and mat2 shapes cannot be multiplied (a x b and c x d)",
            "RuntimeError: 梯度只能为标量输出隐式创建",
            "ValueError:",
            "",
        ]
    ),
)
def test_property_traceback_like_text_never_5xx(client, prefix, middle, message):
    r = client.post("/v1/explain", json={"text": prefix + middle + "\n" + message, "lang": "both"})
    assert r.status_code in (200, 422), r.text


@NO_5XX
@given(q=st.text(max_size=60), entry_id=st.text(max_size=60), lang=st.sampled_from(["en", "zh", "both", "", "x"]))
def test_property_reads_never_5xx(client, q, entry_id, lang):
    r = client.get("/v1/search", params={"q": q, "lang": lang})
    assert r.status_code in (200, 422), r.text
    from urllib.parse import quote

    r = client.get("/v1/entries/" + quote(entry_id, safe=""))
    assert r.status_code in (200, 404, 422), r.text
    if r.status_code != 200:
        assert_error(r, r.status_code)


@pytest.mark.parametrize("workers", [1, 2])
def test_tbx_serve_starts_and_answers(workers, tmp_path):
    """`tbx serve` (one app, or the factory string with --workers N) answers on its port."""
    import os
    import subprocess
    import sys
    import time

    import httpx

    from explainer.api.threaded import free_port

    from .conftest import ROOT

    port = free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen(
        [sys.executable, "-m", "explainer", "serve", "--port", str(port), "--workers", str(workers)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 90
        while True:
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2)
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline, "tbx serve did not answer"
                time.sleep(0.2)
        assert r.status_code == 200 and r.json()["status"] == "ok"
        r = httpx.post(f"http://127.0.0.1:{port}/v1/explain", json={"text": SEED}, timeout=30)
        assert r.json()["matches"][0]["id"] == "backward-non-scalar-output"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_openapi_schema_builds_without_warnings(tiny):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        spec = create_app(lambda: tiny).openapi()
    ops = [o["operationId"] for p in spec["paths"].values() for o in p.values()]
    assert len(ops) == len(set(ops))


DEEP_CODE = "loss = f(" + "+".join(["a"] * 500) + ").backward()"
DEEP_PASTE = f"""Traceback (most recent call last):
  File "/home/u/train.py", line 12, in <module>
    {DEEP_CODE}
  File "/usr/lib/python3/site-packages/torch/_tensor.py", line 648, in backward
    torch.autograd.backward(
RuntimeError: grad can be implicitly created only for scalar outputs
"""


def test_core_failure_is_still_one_json_error(client):
    """Whatever the core does with a pathological paste, the answer keeps the one error shape."""
    r = client.post("/v1/explain", json={"text": DEEP_PASTE})
    if r.status_code != 200:
        assert_error(r, 500, "internal_error")


def test_deeply_nested_user_code_is_explained(client):
    r = client.post("/v1/explain", json={"text": DEEP_PASTE})
    assert r.status_code == 200
    assert r.json()["matches"][0]["id"] == "backward-non-scalar-output"
