"""Errors every stage may raise and every surface answers with one line."""


class IndexError_(Exception):
    """The index is missing, unreadable, damaged or stale and cannot be rebuilt here."""
