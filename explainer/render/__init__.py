"""The fifth stage, the one place an answer meets its entries: :mod:`explainer.render.answer` (the
JSON, the ranked causes and fixes) and :mod:`explainer.render.markdown` (Markdown, HTML, the terminal)."""
