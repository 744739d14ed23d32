"""Where the knowledge base and its index live.

In a source checkout (``kb/`` beside the package): ``kb/`` and ``data/index.sqlite``, rebuilt when a
``kb/*.md`` file is newer. Once installed from a wheel: ``explainer/_data/kb/`` and
``explainer/_data/index.sqlite``, built when the wheel was built. ``TBX_KB`` and ``TBX_INDEX`` override.
"""

from __future__ import annotations

import os

# plain os.path, not pathlib: this module is on the start-up path of every command
PKG_DIR = os.path.dirname(os.path.abspath(__file__))


def source_root() -> str | None:
    root = os.path.dirname(PKG_DIR)
    if os.path.isdir(os.path.join(root, "kb")) and os.path.isfile(os.path.join(root, "pyproject.toml")):
        return root
    return None


def kb_dir() -> str:
    if os.environ.get("TBX_KB"):
        return os.environ["TBX_KB"]
    root = source_root()
    return os.path.join(root, "kb") if root else os.path.join(PKG_DIR, "_data", "kb")


def index_path() -> str:
    if os.environ.get("TBX_INDEX"):
        return os.environ["TBX_INDEX"]
    root = source_root()
    return os.path.join(root, "data", "index.sqlite") if root else os.path.join(PKG_DIR, "_data", "index.sqlite")
