"""Screenshots to look at: the paste page and a Jupyter answer, at desktop and phone width, in
English and Chinese, in Debian's headless Chromium (Playwright, no browser download).

    python tests/bench/screenshots.py [OUTDIR]     # default: test-artifacts/screenshots/

The page is served by the real app over the shipped knowledge base and explains the seed paste; the
Jupyter answer is the HTML the IPython hook displays in a real kernel (nbclient), shown as a
notebook's output area would show it. Prints each file written and the height of its content.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SEED = (ROOT / "tests" / "fixtures" / "pastes" / "seed_flat_windows.txt").read_text(encoding="utf-8")
CELL = "import torch\nx = torch.tensor([2.0, 3.0], requires_grad=True)\nloss = x ** 2 + 3 * x\nloss.backward()"
WIDTHS = {"desktop": (1280, 900), "phone": (390, 844)}
NOTEBOOK_PAGE = """<!doctype html><html><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{{font:14px/1.45 system-ui,"Noto Sans CJK SC",sans-serif;margin:0;padding:12px;color:#222}}
.err{{background:#fdd;font:12px/1.3 monospace;white-space:pre-wrap;padding:6px;margin-bottom:8px}}
pre{{background:#f5f5f5;padding:8px;overflow-x:auto}} code{{font-family:monospace}}</style></head>
<body><div class="err">{error}</div>{html}</body></html>"""


def jupyter_answers() -> dict[str, tuple[str, str]]:
    """lang -> (the error's text, the HTML the hook displayed), from a real kernel."""
    import os

    import nbclient
    import nbformat

    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    out = {}
    for lang in ("en", "zh"):
        nb = nbformat.v4.new_notebook()
        nb.cells = [
            nbformat.v4.new_code_cell(f"%load_ext explainer\n%explainer lang {lang}"),
            nbformat.v4.new_code_cell(CELL),
        ]
        nbclient.NotebookClient(nb, timeout=180, kernel_name="python3", allow_errors=True).execute()
        outputs = nb.cells[1].outputs
        err = next(o for o in outputs if o["output_type"] == "error")
        html = "".join(o.get("data", {}).get("text/html", "") for o in outputs if o["output_type"] == "display_data")
        out[lang] = (f"{err['ename']}: {err['evalue']}", html)
    return out


def main() -> int:
    import html as html_mod

    from playwright.sync_api import sync_playwright

    from explainer.api.app import create_app
    from explainer.api.threaded import ThreadedServer
    from explainer.knowledge.index import open_index

    outdir = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "test-artifacts" / "screenshots"
    outdir.mkdir(parents=True, exist_ok=True)
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    index = open_index()
    notebooks = jupyter_answers()
    with ThreadedServer(create_app(lambda: index)) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox", "--disable-gpu"])
        for name, (w, h) in WIDTHS.items():
            for lang in ("en", "zh"):
                ctx = browser.new_context(viewport={"width": w, "height": h}, locale="en-US")
                page = ctx.new_page()
                page.goto(url + "/")
                page.fill("#paste", SEED)
                with page.expect_response(lambda r: r.url.endswith("/v1/explain")):
                    page.check(f'input[name="lang"][value="{lang}"]')
                    if page.locator("#result").is_hidden():
                        page.click("#explain")
                page.wait_for_selector("#result:not([hidden])")
                path = outdir / f"page-{name}-{lang}.png"
                page.screenshot(path=str(path), full_page=True)
                print(f"{path}  {page.evaluate('document.body.scrollHeight')} px high")
                error, answer = notebooks[lang]
                page.set_content(NOTEBOOK_PAGE.format(error=html_mod.escape(error), html=answer))
                path = outdir / f"jupyter-{name}-{lang}.png"
                page.screenshot(path=str(path), full_page=True)
                print(f"{path}  {page.evaluate('document.body.scrollHeight')} px high")
                ctx.close()
        browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
