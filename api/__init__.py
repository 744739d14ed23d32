"""The HTTP surface of traceback-explainer: a thin FastAPI app over one core call per route.

Start it with ``tbx serve`` (see :func:`explainer.api.app.serve`) or build it with :func:`explainer.api.app.create_app`.
This package is the only place that imports FastAPI; the core (``explainer``) never imports it.
"""
