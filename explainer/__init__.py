"""traceback-explainer: paste a PyTorch traceback, get a verified bilingual answer.

Importing this package is free: everything is loaded on first use.

    >>> import explainer
    >>> explainer.install()          # explain uncaught exceptions of this script
    %load_ext explainer              # in IPython / Jupyter
"""

from __future__ import annotations

__all__ = ["__version__", "install", "uninstall", "load_ipython_extension", "unload_ipython_extension"]


def install():
    """Set ``sys.excepthook`` to the explaining hook; returns the previous hook."""
    from explainer.surfaces.hook import install as _install

    return _install()


def uninstall() -> None:
    """Restore the hook that :func:`install` replaced."""
    from explainer.surfaces.hook import uninstall as _uninstall

    _uninstall()


def load_ipython_extension(shell) -> None:
    from explainer.surfaces.magics import load_ipython_extension as _load

    _load(shell)


def unload_ipython_extension(shell) -> None:
    from explainer.surfaces.magics import unload_ipython_extension as _unload

    _unload(shell)


def __getattr__(name: str):
    """``explainer.__version__``, read from ``_version.py`` when asked (nothing is loaded on import)."""
    if name == "__version__":
        from explainer._version import __version__

        return __version__
    raise AttributeError(f"module 'explainer' has no attribute {name!r}")
