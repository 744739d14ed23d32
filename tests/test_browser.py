"""The paste page in a real headless Chromium (Debian's ``chromium``), driven by Playwright.

The server is uvicorn in a thread on a free port over the real knowledge base. The test pastes the
seed traceback, switches to Chinese and to both languages, checks the answer in each, checks that
the page loaded nothing from outside, and saves ``test-artifacts/paste-page-zh.png``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from .conftest import FIXTURES, ROOT

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / "test-artifacts"
SEED = (FIXTURES / "pastes" / "seed_flat_windows.txt").read_text(encoding="utf-8")
TITLE_EN = "backward() called on a tensor that is not a scalar"
TITLE_ZH = "对非标量张量调用 backward()"

if not (CHROMIUM.exists() or shutil.which("chromium")):
    pytest.skip(
        "needs Debian's chromium at /usr/bin/chromium (apt-get install chromium fonts-noto-cjk)",
        allow_module_level=True,
    )
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="needs the Python package playwright (pip install playwright; no browser download)"
)
pytest.importorskip("uvicorn", reason="needs uvicorn")


pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(index):
    from explainer.api.app import create_app
    from explainer.api.threaded import ThreadedServer

    with ThreadedServer(create_app(lambda: index)) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=str(CHROMIUM if CHROMIUM.exists() else shutil.which("chromium")),
            headless=True,
            args=["--no-sandbox", "--disable-background-networking", "--disable-gpu", "--disable-dev-shm-usage"],
        )
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser, server):
    # a phone-sized viewport: the page must read well there
    context = browser.new_context(viewport={"width": 412, "height": 915}, device_scale_factor=2, locale="en-US")
    page = context.new_page()
    outside: list[str] = []
    problems: list[str] = []
    page.on("request", lambda req: outside.append(req.url) if not req.url.startswith((server, "data:")) else None)
    page.on("console", lambda msg: problems.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    page.outside, page.problems = outside, problems
    yield page
    context.close()


def explain_in(page, lang_value: str) -> None:
    with page.expect_response(lambda r: r.url.endswith("/v1/explain")) as resp:
        page.check(f'input[name="lang"][value="{lang_value}"]')
        if page.locator("#result").is_hidden():
            page.click("#explain")
    assert resp.value.status == 200
    page.wait_for_selector("#matches article.match")


def test_paste_page_explains_the_seed_in_chinese_and_both(page, server):
    page.goto(server + "/")
    assert page.title() == "traceback-explainer"
    page.fill("#paste", SEED)
    explain_in(page, "zh")

    first = page.locator("#matches article.match").first
    assert first.get_attribute("data-id") == "backward-non-scalar-output"
    assert first.locator("summary .title").inner_text() == TITLE_ZH
    # the short answer first: the summary, the cause the paste points to and the best fix
    short = first.locator(".rendered.short").inner_text()
    assert "标量" in short and "最可能的原因" in short and "解决办法" in short
    # each piece once: the title and the confidence only in the card's header
    card = first.inner_text()
    assert card.count(TITLE_ZH) == 1 and card.count("置信度") == 1, card
    # the rest folded away until asked for, with how it was matched as a sentence
    more = first.locator("details.more")
    assert not more.evaluate("d => d.open")
    more.locator("summary").click()
    rest = more.locator(".rendered").inner_text()
    assert "常见原因" in rest and "解决办法" in rest
    assert more.locator(".reasons").inner_text().startswith("匹配依据：")
    # the parsed exception and the user's own frame
    parsed = page.locator("#parsed").inner_text()
    assert "RuntimeError: grad can be implicitly created only for scalar outputs" in parsed
    assert "train.py" in parsed and "loss.backward()" in parsed
    assert page.locator("#explain").inner_text() == "解释"
    # the fix code comes with copy buttons, the template filled with the user's `loss`
    assert first.locator(".codeblock button.copy").count() >= 1
    assert "loss.mean().backward()" in first.locator(".codeblock pre").first.inner_text()

    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "paste-page-zh.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000

    explain_in(page, "both")
    first = page.locator("#matches article.match").first
    title = first.locator("summary .title").inner_text()
    assert TITLE_EN in title and TITLE_ZH in title
    first.locator("details.more summary").click()
    rest = first.locator("details.more .rendered").inner_text()
    assert "Likely causes" in rest and "常见原因" in rest
    page.screenshot(path=str(ARTIFACTS / "paste-page-both.png"), full_page=True)

    explain_in(page, "en")
    assert page.locator("#matches article.match summary .title").first.inner_text() == TITLE_EN

    assert page.outside == [], f"the page loaded from outside: {page.outside}"
    assert page.problems == [], page.problems  # no script errors, no CSP violations


def test_copy_button_copies_the_fix(page, server, browser):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server)
    page.goto(server + "/")
    page.fill("#paste", SEED)
    explain_in(page, "en")
    block = page.locator("#matches article.match").first.locator(".codeblock").first
    expected = block.locator("pre").inner_text().strip()
    block.locator("button.copy").click()
    # poll the clipboard itself: the button's "done" state lasts 1.5 s, too short to rely on under load
    copied = ""
    for _ in range(100):
        copied = page.evaluate("navigator.clipboard.readText()")
        if copied.strip() == expected:
            break
        page.wait_for_timeout(100)
    assert copied.strip() == expected


def test_page_escapes_the_paste(page, server):
    page.goto(server + "/")
    evil = SEED.replace(
        "loss.backward()", "loss.backward()  # <img src=x onerror=window.__pwned=1><script>window.__pwned=2</script>"
    )
    page.fill("#paste", evil)
    explain_in(page, "en")
    assert page.evaluate("window.__pwned === undefined")
    assert page.locator("#result img").count() == 0 and page.locator("#result script").count() == 0
    assert "<img src=x" in page.locator("#parsed").inner_text()


def test_docs_page_renders_offline(page, server):
    page.goto(server + "/docs")
    page.wait_for_selector("details.route")
    text = page.locator("#routes").inner_text()
    for route in ("/v1/explain", "/v1/entries/{entry_id}", "/v1/search", "/healthz"):
        assert route in text
    assert page.outside == [] and page.problems == []


LONG_LINE = """\
Traceback (most recent call last):
  File "/home/me/project/train_classifier.py", line 88, in <module>
    normalized_feature_windows = (feature_windows_for_this_batch - feature_windows_for_this_batch.mean(dim=1)) / feature_windows_for_this_batch.std(dim=1)
RuntimeError: The size of tensor a (24) must match the size of tensor b (8) at non-singleton dimension 1
"""


def test_on_a_phone_the_answer_starts_on_screen_and_the_fix_is_never_hidden(browser, server):
    context = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=3, locale="en-US")
    page = context.new_page()
    try:
        page.goto(server + "/")
        page.fill("#paste", LONG_LINE)
        explain_in(page, "en")
        card = page.locator("#matches article.match").first
        box = card.bounding_box()
        assert box is not None and 0 <= box["y"] < 844, box  # the answer is on the first screen after Explain
        fix = card.locator(".rendered.short .codeblock").first
        pre, button = fix.locator("pre"), fix.locator("button.copy")
        assert "keepdim=True" in pre.inner_text()  # the fix rewrote the user's long line
        # the code wraps: nothing of it lies past the right edge, so the change is on screen
        assert page.evaluate("(el) => el.scrollWidth <= el.clientWidth + 1", pre.element_handle())
        p, b = pre.bounding_box(), button.bounding_box()
        assert p["x"] + p["width"] <= 390 + 0.5
        # the copy button never covers the code: it sits above it
        assert b["y"] + b["height"] <= p["y"] + 0.5, (b, p)
        page.screenshot(path=str(ARTIFACTS / "paste-page-phone-390.png"), full_page=False)
    finally:
        context.close()
