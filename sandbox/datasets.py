"""What micrograd's demo.ipynb asks of numpy and scikit-learn before its loss, in the browser
sandbox, which has neither (docs/sandbox.md, "Stand-ins"):

- `sklearn.datasets.make_moons(n_samples, noise=…, random_state=…)`: the moons of
  chainrule.sandbox.moons (scikit-learn's formula drawn from Python's seeded generator), drawn
  from `random_state`, else from the seed `np.random.seed` was last given, else the demo's 1337;
  any other function of `sklearn.datasets` imports and raises Unavailable when called;
- `np.random.seed(s)` (the seed the moons are drawn from, as scikit-learn draws from numpy's),
  `np.random.permutation(n)` (the demo's minibatches) and `np.array(rows)`; anything else of
  numpy raises Unavailable when used, as before;
- `Rows`: the arrays they return, doing what the demo does with `X` and `y`: `y*2 - 1` (a number
  with each element), `X[:,0]`, `X[ri]` (rows by a list of indices), `X.shape`, `X.min()`, and
  rows that iterate as Python numbers (`list(map(Value, xrow))`)."""

from __future__ import annotations

import operator
import random
import types
from collections.abc import Callable, Iterator
from typing import Any

from chainrule.sandbox.moons import SEED
from chainrule.sandbox.moons import make_moons as moons
from chainrule.sandbox.stubs import Unavailable, _MissingModule


class Rows:
    """A 1-D list of numbers or a 2-D list of rows (each a list of numbers), as much of a numpy
    array as the demo uses; its elements are Python's ints and floats."""

    def __init__(self, items: Any) -> None:
        self._items = [list(row) if _is_row(row) else row for row in items]

    @property
    def shape(self) -> tuple[int, ...]:
        if self._items and isinstance(self._items[0], list):
            return (len(self._items), len(self._items[0]))
        return (len(self._items),)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Any]:
        return (Rows(item) if isinstance(item, list) else item for item in self._items)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, tuple):  # X[:, 0], X[3, 1]
            rows, column = key
            if isinstance(rows, int):
                return self._items[rows][column]
            return Rows(row[column] for row in self[rows]._items)
        if isinstance(key, (list, Rows)):  # X[ri]
            return Rows(self._items[int(i)] for i in key)
        item = self._items[key]
        if isinstance(key, slice):
            return Rows(item)
        return Rows(item) if isinstance(item, list) else item

    def _each(self, other: Any, op: Callable[[Any, Any], Any]) -> Rows:
        if not isinstance(other, (int, float)):
            return NotImplemented
        return Rows(
            [op(x, other) for x in item] if isinstance(item, list) else op(item, other)
            for item in self._items
        )

    def __add__(self, other: Any) -> Rows:
        return self._each(other, operator.add)

    def __radd__(self, other: Any) -> Rows:
        return self._each(other, lambda x, y: y + x)

    def __sub__(self, other: Any) -> Rows:
        return self._each(other, operator.sub)

    def __rsub__(self, other: Any) -> Rows:
        return self._each(other, lambda x, y: y - x)

    def __mul__(self, other: Any) -> Rows:
        return self._each(other, operator.mul)

    def __rmul__(self, other: Any) -> Rows:
        return self._each(other, lambda x, y: y * x)

    def __truediv__(self, other: Any) -> Rows:
        return self._each(other, operator.truediv)

    def __neg__(self) -> Rows:
        return self._each(-1, operator.mul)

    def _flat(self) -> list[Any]:
        return [x for item in self._items for x in (item if isinstance(item, list) else [item])]

    def min(self) -> Any:
        return min(self._flat())

    def max(self) -> Any:
        return max(self._flat())

    def tolist(self) -> list[Any]:
        return [list(item) if isinstance(item, list) else item for item in self._items]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Rows) and self._items == other._items

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"array({self.tolist()!r})"


def _is_row(item: Any) -> bool:
    return isinstance(item, (list, tuple, Rows))


def numpy_stand_in() -> types.ModuleType:
    """numpy as the demo uses it (module docstring): a fresh one each run, seeded as the demo's."""
    numpy, numpy_random = _MissingModule("numpy"), _MissingModule("numpy.random")
    drawn = random.Random(SEED)

    def seed(value: Any = None) -> None:
        numpy_random.state = SEED if value is None else int(value)
        drawn.seed(numpy_random.state)

    def permutation(n: int) -> Rows:
        order = list(range(int(n)))
        drawn.shuffle(order)
        return Rows(order)

    numpy_random.state = SEED
    numpy_random.seed, numpy_random.permutation = seed, permutation
    numpy.random, numpy.array = numpy_random, Rows
    return numpy


class _Datasets(types.ModuleType):
    """`sklearn.datasets`: any function imports, and raises Unavailable when called."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)

        def missing(*_args: Any, **_kwargs: Any) -> Any:
            raise Unavailable("sklearn")

        return missing


def sklearn_stand_in(numpy: types.ModuleType) -> tuple[types.ModuleType, types.ModuleType]:
    """`sklearn` and `sklearn.datasets` (module docstring): the moons drawn from `random_state`,
    else from `numpy`'s seed."""

    def make_moons(
        n_samples: int = 100,
        *,
        shuffle: bool = True,
        noise: float | None = None,
        random_state: int | None = None,
    ) -> tuple[Rows, Rows]:
        del shuffle  # always shuffled, as the demo's are
        state = numpy.random.state if random_state is None else int(random_state)
        points, labels = moons(int(n_samples), noise=noise, seed=state)
        return Rows(points), Rows(labels)

    datasets = _Datasets("sklearn.datasets")
    datasets.make_moons = make_moons
    sklearn = _MissingModule("sklearn")
    sklearn.datasets = datasets
    return sklearn, datasets
