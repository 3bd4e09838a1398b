"""The request and response of `POST /api/fan-in` (where one element's gradient comes from)."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from chainrule.app.api.schemas import GraphRequest, Number, ResponsePart

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
