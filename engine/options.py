"""What a trace asks besides its program and its values, said once: the options of
`POST /api/graph` (and of every request built on it), with their defaults. The API's schema
produces one (`GraphRequest.options`), the server's cache keys and structure ids are made of all
of its fields, and the engine is called with them, so a new option is a field here, the engine
code that reads it and the page's request table."""

from __future__ import annotations

from dataclasses import astuple, dataclass, fields
from typing import Any

# The options that shape the graph as it is built; the rest are `tracing.run`'s.
BUILD_FIELDS = ("expand_derived",)


@dataclass(frozen=True)
class Options:
    expand_derived: bool = False  # the graph of primitives (micrograd-exact), not derived ops
    mode: str = "correct"  # "overwrite": the = instead of += bug, as a teaching variant
    order: tuple[str, ...] | None = None  # a visit order chosen by the learner (node ids)
    target: str | None = None  # grads of this node (an id or a name), not of the root
    pass_: str = "reverse"  # "forward": forward mode's tangents by `wrt`
    wrt: str | None = None  # forward mode's leaf

    def __post_init__(self) -> None:
        if self.order is not None and not isinstance(self.order, tuple):
            object.__setattr__(self, "order", tuple(self.order))

    @classmethod
    def of(cls, holder: Any) -> Options:
        """The options an object with the same attributes holds (a request)."""
        return cls(**{field.name: getattr(holder, field.name) for field in fields(cls)})

    def key(self) -> tuple:
        """Every field, in order: what a cache key or a structure id is made of."""
        return astuple(self)

    def trace_kwargs(self) -> dict[str, Any]:
        """`engine.trace`'s (and `engine.numbers`') keyword arguments."""
        kwargs = {field.name: getattr(self, field.name) for field in fields(self)}
        kwargs["order"] = list(self.order) if self.order is not None else None
        return kwargs

    def run_kwargs(self) -> dict[str, Any]:
        """`engine.run`'s keyword arguments: the options that are not the build's."""
        kwargs = self.trace_kwargs()
        for name in BUILD_FIELDS:
            del kwargs[name]
        return kwargs
