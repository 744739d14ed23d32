"""``tbx new ID``: the start of a knowledge-base entry, from the catalog line of that id.

The scaffold has every heading in both languages, the catalog's message template and older wordings
as patterns, its telling frames, a reproducer fence and one fix; what only a person can write is
marked ``TODO`` and fails ``tbx lint`` until it is written.
"""

from __future__ import annotations

import json
import os

CATALOG_ENV = "TBX_CATALOG"


def default_catalog() -> str | None:
    if os.environ.get(CATALOG_ENV):
        return os.environ[CATALOG_ENV]
    from explainer.paths import source_root

    root = source_root()
    if root:
        path = os.path.join(os.path.dirname(root), "shared", "catalog", "errors.jsonl")
        if os.path.exists(path):
            return path
    return None


def catalog_line(entry_id: str, catalog: str) -> dict | None:
    with open(catalog, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                item = json.loads(line)
                if item.get("id") == entry_id:
                    return item
    return None


def _toml_list(items: list[str], indent: str = "  ") -> str:
    if not items:
        return "[]"
    return "[\n" + "".join(f"{indent}{json.dumps(i, ensure_ascii=False)},\n" for i in items) + "]"


def scaffold(item: dict) -> str:
    """The Markdown of a new entry for one catalog item."""
    exc = item.get("exc_type") or "RuntimeError"
    variants = [v.split(" (")[0] if v.endswith(")") and " (" in v else v for v in item.get("message_variants") or []]
    variants = [
        v.split(": ", 1)[1] if v.split(": ", 1)[0].endswith(("Error", "Warning", "Exception")) and ": " in v else v
        for v in variants
    ]
    patterns = [item.get("message_template") or item.get("message_2_13") or "TODO the message as torch 2.13 prints it"]
    patterns += [v for v in variants if v and v not in patterns]
    short = exc.rsplit(".", 1)[-1]
    role = "warns" if item.get("kind") == "warning" else "raises"
    return f'''+++
id = "{item["id"]}"
title = {{ en = "TODO a short title", zh = "TODO 简短的标题" }}
category = "{item.get("category", "other")}"
kind = "{item.get("kind", "error")}"
exception_types = {_toml_list([exc])}
patterns = {_toml_list(patterns)}
frames = {_toml_list(item.get("frames") or [])}
excludes = []
related = []
torch_verified = ["2.13.0"]
docs = []
+++

## Summary

### en
TODO one sentence: what went wrong.

### zh
TODO 一句话说明出了什么问题。

## Explanation

### en
TODO why torch raises it: the mechanism, not the message restated.
Catalog trigger: {item.get("trigger") or "-"}

### zh
TODO 为什么会报这个错：讲机制，不要复述报错信息。

## Causes

### TODO-cause
#### en
**TODO the most frequent cause.** TODO
Recognise: TODO what in a paste tells this cause.

#### zh
**TODO 最常见的原因。** TODO
识别：TODO 从报错里怎么认出这个原因。

```toml evidence
[[if]]
code = 'TODO a regular expression on the failing line'
en = "TODO what your line shows"
zh = "TODO 你这一行……"
```

## Fixes

### TODO-fix
#### en
**TODO the fix.** TODO

#### zh
**TODO 解决办法。** TODO

```rewrite causes=TODO-cause
TODO one operation per line (kb/README.md, "Rewrites")
```

## Reproducer

```python repro {role}={short}
import torch

TODO  # error
assert TODO  # the intended result, once fixed
```

```python repro {role}={short} cause=TODO-cause
import torch

TODO a variant: other names and structure (inside forward, a loop, a helper)  # error
assert TODO
```
'''
