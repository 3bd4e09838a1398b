"""The request and response of `POST /api/paths` (every path of the chain rule)."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from chainrule.app.api.schemas import GraphRequest, Number, ResponsePart
from chainrule.engine.paths import MAX_LIMIT

DEFAULT_LIMIT = 20


class PathsRequest(GraphRequest):
    """The `/api/graph` body plus the node the paths start from and how many to list."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [{"source": "a = 2\nb = a + 1\nc = a * 3\nd = b * c", "leaf": "a"}]
        },
    )

    leaf: str = Field(
        min_length=1,
        max_length=200,
        description="Where the paths start: a node id (`n0`) or a name (`a`); not a constant.",
    )
    limit: int = Field(
        default=DEFAULT_LIMIT,
        ge=1,
        le=MAX_LIMIT,
        description="List at most this many paths, the largest |product| first.",
    )


class ChainPath(ResponsePart):
    nodes: list[str] = Field(description="Node ids from the target back to the leaf.")
    edges: list[str] = Field(description="Edge ids from the target back to the leaf.")
    locals: list[Number] = Field(description="Each edge's local derivative, in `edges` order.")
    product: Number = Field(description="The product of `locals` (1 for the empty path).")
    text: str = Field(description="`∂d/∂c · ∂c/∂a = 3 · 3 = 9`, the same in every language.")


class PathsResponse(ResponsePart):
    """Every path from `leaf` to `target`, or the largest ones when there are too many."""

    leaf: str
    target: str = Field(description="The node the paths end at: the root or the `target`.")
    grad: Number = Field(description="grad[leaf] = ∂target/∂leaf, from the backward pass.")
    count: str = Field(
        description="How many paths there are, in decimal digits (they outgrow JSON numbers)."
    )
    count_exact: bool = Field(description="False when `count` is only a lower bound (10^60).")
    complete: bool = Field(description="Whether `paths` lists every path; then `sum` = `grad`.")
    sum: Number = Field(description="The sum of the listed paths' products.")
    paths: list[ChainPath] = Field(description="The largest |product| first.")
