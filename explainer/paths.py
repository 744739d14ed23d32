"""Where the knowledge base and its index live.

In a source checkout (``kb/`` beside the package): ``kb/`` and ``data/index.sqlite``, rebuilt when a
``kb/*.md`` file is newer. Once installed from a wheel: ``explainer/_data/kb/`` and
``explainer/_data/index.sqlite``, built when the wheel was built; ``tbx build`` on an installed
package writes to the user's cache (``$XDG_CACHE_HOME/traceback-explainer/``, ``~/.cache/...``,
``%LOCALAPPDATA%`` on Windows), never into site-packages, and the reader prefers that index while it
is newer than the packaged one. ``TBX_KB`` and ``TBX_INDEX`` override.
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


def data_dir() -> str:
    """The folder of the shipped data files: a checkout's ``data/``, an installed package's ``_data/``."""
    root = source_root()
    return os.path.join(root, "data") if root else os.path.join(PKG_DIR, "_data")


def cache_dir() -> str:
    """The user's cache folder for this tool (the XDG convention; LOCALAPPDATA on Windows)."""
    base = (
        os.environ.get("XDG_CACHE_HOME")
        or (os.environ.get("LOCALAPPDATA") if os.name == "nt" else None)
        or os.path.join(os.path.expanduser("~"), ".cache")
    )
    return os.path.join(base, "traceback-explainer")


def user_index_path() -> str:
    """Where ``tbx build`` writes on an installed package: one index per version in the cache."""
    from explainer._version import __version__

    return os.path.join(cache_dir(), f"index-{__version__}.sqlite")


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return -1.0


def index_path() -> str:
    """The index to read: ``TBX_INDEX``; in a checkout ``data/index.sqlite``; installed, the user's
    rebuilt one while it is newer than the packaged one, else the packaged one."""
    if os.environ.get("TBX_INDEX"):
        return os.environ["TBX_INDEX"]
    root = source_root()
    if root:
        return os.path.join(root, "data", "index.sqlite")
    packaged = os.path.join(PKG_DIR, "_data", "index.sqlite")
    user = user_index_path()
    return user if _mtime(user) >= max(_mtime(packaged), 0.0) else packaged


def owned_index_paths() -> set[str]:
    """The index paths the tool owns whatever is there: a checkout's ``data/index.sqlite`` and the
    user's cache (absolute)."""
    root = source_root()
    owned = {os.path.abspath(user_index_path())}
    if root:
        owned.add(os.path.abspath(os.path.join(root, "data", "index.sqlite")))
    return owned


def build_path() -> str:
    """Where ``tbx build`` writes by default: never inside an installed package."""
    if os.environ.get("TBX_INDEX"):
        return os.environ["TBX_INDEX"]
    root = source_root()
    return os.path.join(root, "data", "index.sqlite") if root else user_index_path()
