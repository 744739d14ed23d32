"""Where the knowledge base and its index live.

In a source checkout (``kb/`` beside the package): ``kb/`` and ``data/index.sqlite``, rebuilt when a
``kb/*.md`` file is newer. Once installed from a wheel: ``explainer/_data/kb/`` and
``explainer/_data/index.sqlite``, built when the wheel was built. ``TBX_KB`` and ``TBX_INDEX`` override.
"""

from __future__ import annotations

import os
from pathlib import Path

_PKG = Path(__file__).resolve().parent


def source_root() -> Path | None:
    root = _PKG.parent
    if (root / "kb").is_dir() and (root / "pyproject.toml").is_file():
        return root
    return None


def kb_dir() -> Path:
    if os.environ.get("TBX_KB"):
        return Path(os.environ["TBX_KB"])
    root = source_root()
    return root / "kb" if root else _PKG / "_data" / "kb"


def index_path() -> Path:
    if os.environ.get("TBX_INDEX"):
        return Path(os.environ["TBX_INDEX"])
    root = source_root()
    return root / "data" / "index.sqlite" if root else _PKG / "_data" / "index.sqlite"
