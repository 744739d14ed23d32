"""The version, in a module of its own: the package face imports the surfaces, which need it."""

__version__ = "0.1.0"
