"""Request and response schemas of the JSON API (docs/api.md); they also generate `/docs`."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, field_validator

# The engine writes non-finite numbers as these strings so that the JSON is always valid.
NonFinite = Literal["Infinity", "-Infinity", "NaN"]
Number = float | NonFinite


def _require_text(text: str) -> str:
    """Reject lone surrogates: JSON `"\\ud800"` decodes to a str that cannot be UTF-8 encoded."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError("must be valid Unicode text (it contains a lone surrogate)") from error
    return text


class GraphRequest(BaseModel):
    """A program to trace; the body of `POST /api/graph` and `POST /api/export`."""

    model_config = ConfigDict(extra="forbid")

    source: str = Field(description="The program, e.g. `a = 2; b = -3; c = 10; f = (a + b) * c`.")
    # Strict: `true` or `"3"` is a malformed request (422), not silently 1.0 or 3.0.
    values: dict[str, StrictFloat] | None = Field(
        default=None, description="Leaf values by name; they override values in the program."
    )
    expand_derived: bool = Field(
        default=False, description="Build `-`, `/` and unary minus from primitives."
    )
    mode: Literal["correct", "overwrite"] = Field(
        default="correct", description="`overwrite` shows the `=`-instead-of-`+=` bug."
    )
    order: list[str] | None = Field(
        default=None, description="Backward visit order chosen by the student (node ids)."
    )

    @field_validator("values")
    @classmethod
    def _value_names_are_text(cls, values: dict[str, float] | None) -> dict[str, float] | None:
        for name in values or ():
            _require_text(name)
        return values

    @field_validator("order")
    @classmethod
    def _order_ids_are_text(cls, order: list[str] | None) -> list[str] | None:
        for node_id in order or ():
            _require_text(node_id)
        return order


class Permissive(BaseModel):
    """Response parts: documented fields are typed; fields the engine adds later pass through."""

    model_config = ConfigDict(extra="allow")


class NodeWarning(Permissive):
    type: str
    message: str


class Node(Permissive):
    id: str
    label: str
    text: str
    op: str | None
    exponent: Number | None = None
    kind: Literal["leaf", "const", "op"]
    data: Number
    grad: Number
    correct_grad: Number
    derived: bool
    expansion: str | None
    span: tuple[int, int]
    inputs: list[str]
    warnings: list[NodeWarning]
    x: float = Field(description="Centre of the card, px from the left.")
    y: float = Field(description="Centre of the card, px from the top (y grows downward).")
    width: float = Field(description="Card width, px.")
    height: float = Field(description="Card height, px.")


class Edge(Permissive):
    id: str
    source: str = Field(description="The input's id.")
    target: str = Field(description="The consumer's id.")
    index: int = Field(description="Input position in the consumer's ordered inputs.")
    local_grad: Number


class Leaf(Permissive):
    name: str
    id: str
    value: Number


class Contribution(Permissive):
    edge: str
    to: str
    upstream: Number
    local: Number
    contribution: Number
    grad_before: Number
    grad_after: Number
    lost: bool
    late: bool


class Step(Permissive):
    """One timeline step; which optional fields are present depends on `phase`."""

    index: int
    phase: Literal["topo", "forward", "seed", "backward"]
    node: str | None
    narration: str
    # topo
    action: Literal["start", "visit", "skip", "emit"] | None = None
    pop: tuple[str, int] | None = None
    input: str | None = None
    stack: list[tuple[str, int]] | None = None
    sorted: list[str] | None = None
    # forward
    op: str | None = None
    inputs: list[str] | None = None
    data: Number | None = None
    # seed and backward
    grad: Number | None = None
    contributions: list[Contribution] | None = None


class GradCheckResult(Permissive):
    name: str
    id: str
    analytic: Number
    numeric: Number | None
    status: Literal["pass", "fail", "kink", "nonfinite"]


class GradCheck(Permissive):
    eps_rule: str
    checked: int
    total: int
    capped: bool
    results: list[GradCheckResult]


class ProgramWarning(Permissive):
    type: str
    message: str
    line: int | None = None
    column: int | None = None


class LayoutInfo(BaseModel):
    engine: Literal["dot", "sugiyama"] = Field(description="`sugiyama` is the fast fallback.")
    width: float = Field(description="Width of the drawing, px; every card fits inside.")
    height: float = Field(description="Height of the drawing, px.")
    cached: bool = Field(description="True when the layout came from the structure cache.")


class GraphResponse(Permissive):
    """The engine's trace (docs/api.md) plus a box for every node and `layout`."""

    nodes: list[Node]
    edges: list[Edge]
    root: str
    leaves: list[Leaf]
    steps: list[Step]
    gradcheck: GradCheck
    warnings: list[ProgramWarning]
    mode: Literal["correct", "overwrite"]
    order: list[str] | None
    source: str
    layout: LayoutInfo


class Preset(Permissive):
    id: str
    title: str
    source: str
    values: dict[str, float] | None = None
    note: str | None = None


class ErrorDetail(Permissive):
    type: str = Field(description="`SyntaxError`, `UnknownName`, `InvalidRequest`, `NotFound`, …")
    message: str
    line: int | None = None
    column: int | None = None
    end_line: int | None = None
    end_column: int | None = None
    snippet: str = Field(default="", description="The source line of the error, or empty.")
    caret: str = Field(default="", description="Spaces then `^^^` under the offending text.")


class ErrorResponse(BaseModel):
    """The one error shape of every endpoint."""

    error: ErrorDetail


class Health(BaseModel):
    status: Literal["ok"]
    version: str
    graphviz: bool
    graphviz_version: str | None
