"""What a lecture cell imports and the sandbox does not ship: Graphviz and matplotlib draw
nothing (chainrule draws the graph), numpy and torch say so when they are used (but for what
micrograd's demo asks of numpy and scikit-learn: chainrule/sandbox/datasets.py), and what would
need the network or the page (micropip, pyodide.http, js) is refused at the import: a courtesy
that says so in words, not a wall (Python reaches `js` by other roads; the worker's own policy
is the wall: docs/sandbox.md)."""

from __future__ import annotations

import builtins
import types
from collections.abc import Callable
from typing import Any


class Unavailable(ImportError):
    """A module the sandbox does not have, used; `module` names it."""

    def __init__(self, module: str) -> None:
        super().__init__(f"{module} is not available in the browser sandbox")
        self.module = module


class _Nothing:
    """Accepts any call and any attribute, does nothing, and returns itself (a `Digraph`
    whose `node`, `edge`, `attr` and `render` draw nothing; matplotlib's `plt.plot`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __call__(self, *args: Any, **kwargs: Any) -> _Nothing:
        return self

    def __getattr__(self, name: str) -> _Nothing:
        if name.startswith("__"):
            raise AttributeError(name)
        return self

    def __repr__(self) -> str:
        return "<drawn by chainrule>"


class _QuietModule(types.ModuleType):
    """A module whose every attribute is a `_Nothing`."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _Nothing()


class _MissingModule(types.ModuleType):
    """A module that imports (a lecture's first cell imports numpy beside math and random)
    and raises Unavailable when anything of it is used."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise Unavailable(self.__name__.split(".")[0])


def _quiet(name: str, **members: Any) -> types.ModuleType:
    module = _QuietModule(name)
    for key, value in members.items():
        setattr(module, key, value)
    return module


def stub_modules() -> dict[str, types.ModuleType]:
    """The modules a learner's `import` gets instead of the real ones, by dotted name."""
    from chainrule.sandbox.datasets import numpy_stand_in, sklearn_stand_in

    pyplot = _quiet("matplotlib.pyplot")
    numpy = numpy_stand_in()
    sklearn, datasets = sklearn_stand_in(numpy)
    return {
        "graphviz": _quiet("graphviz", Digraph=_Nothing, Graph=_Nothing, Source=_Nothing),
        "matplotlib": _quiet("matplotlib", pyplot=pyplot),
        "matplotlib.pyplot": pyplot,
        "numpy": numpy,
        "numpy.random": numpy.random,
        "sklearn": sklearn,
        "sklearn.datasets": datasets,
        "torch": _MissingModule("torch"),
    }


# Importing these would reach for the network or the page: refused with the module's name (the
# browser refuses the requests themselves, whatever road reaches them: docs/sandbox.md).
REFUSED = ("micropip", "pyodide", "pyodide_js", "js")


def sandbox_import(stubs: dict[str, types.ModuleType]) -> Callable[..., Any]:
    """An `__import__` for the learner's code: stubs first, refused modules refused, the rest
    imported as usual (math, random, micrograd, …)."""
    real = builtins.__import__

    def _import(name: str, globals=None, locals=None, fromlist=(), level=0):  # noqa: A002
        top = name.split(".")[0]
        if level == 0 and top in REFUSED:
            raise Unavailable(top)
        if level == 0 and name in stubs:
            return stubs[name] if fromlist else stubs[top]
        if level == 0 and top in stubs:  # a part no stand-in has (`sklearn.svm`)
            raise Unavailable(top)
        return real(name, globals, locals, fromlist, level)

    return _import
