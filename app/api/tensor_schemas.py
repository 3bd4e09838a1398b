"""The requests and responses of the tensor programs' own routes: `POST /api/fan-in` (where one
element's gradient comes from), `POST /api/expand` (the scalar graph of one tensor op, and with
`graph` that graph laid out as `POST /api/graph` lays out a scalar program) and
`POST /api/tensor-graph`."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field, StrictBool

from chainrule.app.api.schemas import (
    Edge,
    GraphRequest,
    LayoutInfo,
    NodeWarning,
    Number,
    ResponsePart,
    TableOp,
)
from chainrule.engine.tensor_reply import MAX_EXPANDED_NODES

MAX_DIMS = 8


class FanInRequest(GraphRequest):
    """The `/api/graph` body of a tensor program plus the element whose gradient to explain."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "source": "X = randn(4, 2, seed=3)\nW = randn(2, 3, seed=4)\nY = X @ W\n"
                    "L = tanh(Y).sum()",
                    "tensor": "W",
                    "index": [1, 2],
                }
            ]
        },
    )

    tensor: str = Field(
        min_length=1,
        max_length=200,
        description="The tensor: its id (`t1`) or the name the program assigns it (`W`).",
    )
    index: list[int] = Field(
        max_length=MAX_DIMS, description="The element's index, one integer per dim (`[1, 2]`)."
    )


class FanInTerm(ResponsePart):
    tensor: str = Field(description="The op (its output tensor's id) the element flows into.")
    output: list[int] = Field(
        description="The element of that op's output this term flows into (`Y[i,2]` of "
        "`Y = X @ W` for `W[1,2]`)."
    )
    node: int = Field(description="The scalar node (its id in the element graph) it feeds.")
    upstream: Number = Field(description="That node's gradient.")
    local: Number = Field(description="∂node/∂element, the edge's local derivative.")
    contribution: Number = Field(description="`local × upstream`.")


class FanInResponse(ResponsePart):
    """An element's fan-in: every term of the backward pass that adds to its gradient."""

    tensor: str = Field(description="The tensor's id.")
    index: list[int]
    grad: Number = Field(description="The element's gradient, from the backward pass.")
    sum: Number = Field(
        description="The contributions added to 0 in their order: equal to `grad` to the bit."
    )
    contributions: list[FanInTerm] = Field(
        description="In the order the backward pass adds them (the last node first)."
    )


class ExpandRequest(GraphRequest):
    """The `/api/graph` body of a tensor program plus the tensor op to expand."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "source": "X = randn(2, 2, seed=3)\nW = randn(2, 1, seed=4)\nY = X @ W\n"
                    "L = tanh(Y).sum()",
                    "tensor": "Y",
                }
            ]
        },
    )

    tensor: str = Field(
        min_length=1,
        max_length=200,
        description="The op's output tensor: its id (`t2`) or the name the program assigns it.",
    )
    graph: StrictBool = Field(
        False,
        description="Also answer the graph laid out and drawable as `/api/graph`'s reply is "
        "(`graph`: cards with boxes, edges, layout): what the page's Expand draws.",
    )


class ExpandedInput(ResponsePart):
    node: int = Field(description="The input node's id in the element graph.")
    tensor: str | None = Field(
        description="When the input is an element of one of the op's input tensors: its id; "
        "null for a node of the op itself."
    )
    index: list[int] | None = Field(description="That element's index; null as `tensor`.")


class ExpandedNode(ResponsePart):
    id: int = Field(description="The node's id in the element graph.")
    op: TableOp | None = Field(description="The op table's op; null for a constant.")
    exponent: Number | None = Field(description="The constant power of `x**k`; else null.")
    kind: Literal["op", "const"]
    data: Number
    grad: Number
    local_grads: list[Number] = Field(description="One per input, in order.")
    inputs: list[ExpandedInput]
    output: list[int] | None = Field(
        description="The output element this node is (its index); null for a node inside."
    )


class ExpandedElement(ResponsePart):
    tensor: str = Field(description="The tensor's id.")
    index: list[int] = Field(description="The element's index in it.")


class ExpandedCard(ResponsePart):
    """A card of the expanded graph: the fields of `/api/graph`'s nodes that a drawing reads,
    meaning what they mean there, and the element it is."""

    id: str = Field(description="`n` and the node's id in the element graph (`n38`).")
    label: str = Field(
        description="An element's name (`X[0,1]`, `(X @ W)[2,1]`), a constant's number; else empty."
    )
    name: str = Field(description="An element's name; else empty.")
    text: str = Field(description="Its label, else its formula in its inputs' texts.")
    op: TableOp | None = Field(description="The op table's op; null for a leaf or constant.")
    exponent: Number | None = Field(description="The constant power of `x**k`; else null.")
    kind: Literal["leaf", "const", "op"] = Field(
        description="`leaf`: an element of an input tensor, which the op reads."
    )
    data: Number
    grad: Number = Field(description="Its gradient in the program: its tensor card's cell.")
    derived: bool
    expansion: str | None
    span: tuple[int, int] = Field(description="The op's [start, end) offsets in `source`.")
    inputs: list[str] = Field(description="Input ids in order (none for a leaf).")
    warnings: list[NodeWarning]
    element: ExpandedElement | None = Field(
        description="The tensor element it is: an input's or an output's; null inside the op."
    )
    x: float = Field(description="Centre of the card, px from the left.")
    y: float = Field(description="Centre of the card, px from the top (y grows downward).")
    width: float = Field(description="Card width, px.")
    height: float = Field(description="Card height, px.")


class ExpandedGraph(ResponsePart):
    """The expanded op as `/api/graph`'s reply draws a graph: cards, edges, layout."""

    nodes: list[ExpandedCard] = Field(
        description="The input elements it reads (leaves), then its nodes, in build order."
    )
    edges: list[Edge] = Field(description="One per input of each of the op's nodes.")
    layout: LayoutInfo


class ExpandResponse(ResponsePart):
    """The scalar graph one tensor op built, in build order (every node after its inputs)."""

    tensor: str = Field(description="The op's output tensor's id.")
    op: str = Field(description="The tensor op (`@`, `+`, `sum`, `cross_entropy`, …).")
    limit: int = Field(
        description=f"The most nodes an op may have to be expanded ({MAX_EXPANDED_NODES:,})."
    )
    nodes: list[ExpandedNode] = Field(
        description=f"At most {MAX_EXPANDED_NODES:,} (a larger op is a 400 `LimitExceeded`)."
    )
    graph: ExpandedGraph | None = Field(
        description="With the request's `graph`: the same graph laid out; else null."
    )


class TensorScalarGraph(ResponsePart):
    """A tensor program's scalar graph, compact (docs/api.md, "The scalar graph of a tensor
    program"): what the page's own passes run over when a cell is dragged."""

    kind: Literal["tensor-graph"]
    source: str = Field(description="The program as received.")
    ops: list[str] = Field(description="The op table's keys; `op` holds positions in it.")
    arity: list[int] = Field(description="Per key of `ops`, how many inputs its node reads.")
    op: list[int] = Field(
        description="Per scalar node, in build order: its op (a position in `ops`), −1 a "
        "leaf element, −2 a constant."
    )
    inputs: list[int] = Field(
        description="Every op node's inputs (node ids), `arity` of them each, in node order."
    )
    exponents: list[Number] = Field(description="The exponent of every `**k` node, in order.")
    numbers: list[Number] = Field(
        description="The data of every leaf and constant node, in node order."
    )
    elements: list[int] = Field(
        description="Every tensor's elements (node ids, row-major), tensor after tensor."
    )
    element_start: list[int] = Field(
        description="Per tensor of the `/api/graph` reply (and one more), where its elements "
        "start in `elements`; an integer tensor has none."
    )
    maxima: list[int] = Field(
        description="`[node, count, *members, …]`: a constant that is the largest data of its "
        "members (softmax's shift), computed again when they change."
    )
    choices: list[int] = Field(
        description="`[node, count, *candidates, …]`: a `max`'s copy node, whose input is the "
        "first largest of its candidates."
    )
    root: int = Field(description="The result's node: where the backward pass starts.")
    recomputable: bool = Field(
        description="False when the numbers shape the graph (an integer tensor made from "
        "numbers, `.indices`): the page asks the server instead."
    )
