"""Modules a dependency imports eagerly for a feature the pipeline does not
use, loaded only when that feature is used. ``import great_expectations``
imports every expectation GX ships, among them ones that import
``scipy.stats`` and ``altair``: inside :func:`deferred` the first import of
each named module makes a module whose code runs on first attribute access
(:class:`importlib.util.LazyLoader`), so it loads later or never.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from contextlib import contextmanager


class _DeferringFinder(importlib.abc.MetaPathFinder):
    def __init__(self, names: frozenset[str]):
        self.names = names

    def find_spec(self, fullname, path, target=None):
        if fullname not in self.names:
            return None
        sys.meta_path.remove(self)   # the real spec, as if this finder were not there
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec   # not found or not lazily loadable: the ordinary import decides
        spec.loader = importlib.util.LazyLoader(spec.loader)
        return spec


@contextmanager
def deferred(*names: str):
    """Imports of ``names`` (full dotted names) made inside the block are lazy."""
    finder = _DeferringFinder(frozenset(names))
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)


@contextmanager
def absent(*names: str):
    """Imports of ``names`` (top-level packages) made inside the block fail with
    ImportError, as when the package is not installed (a module already
    imported stays). For an optional dependency imported for a feature the
    pipeline never uses: pandera imports hypothesis, when the test extras
    install it, for ``schema.example()``, a fifth of a second of every process
    that checks a table."""
    blocked = [name for name in names if name not in sys.modules]
    for name in blocked:
        sys.modules[name] = None   # the import system's "not importable" mark
    try:
        yield
    finally:
        for name in blocked:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]
