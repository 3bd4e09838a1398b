"""Request and response schemas of the JSON API (docs/api.md); they also generate `/docs`."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    field_validator,
)

from chainrule.engine.ops import OPS
from chainrule.engine.options import Options

# The engine writes non-finite numbers as these strings so that the JSON is always valid.
NonFinite = Literal["Infinity", "-Infinity", "NaN"]
Number = float | NonFinite


# The languages of the replies' words (engine/i18n.py LANGS).
Lang = Literal["en", "ru", "et"]
LANG_FIELD = Field(
    default=None,
    description="The language of the reply's words (narration, warnings, messages): `en`, "
    "`ru` or `et`. The query's `?lang=` wins over it; without either, `Accept-Language` "
    "decides, else English.",
)
# What `_require_text` says (app/http/errors.py says it in other languages too).
LONE_SURROGATE = "must be valid Unicode text (it contains a lone surrogate)"


def _require_text(text: str) -> str:
    """Reject lone surrogates: JSON `"\\ud800"` decodes to a str that cannot be UTF-8 encoded."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError(LONE_SURROGATE) from error
    return text


class GraphRequest(BaseModel):
    """A program to trace; the body of `POST /api/graph` and `POST /api/export`."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"source": "a = 2\nb = -3\nc = 10\nf = (a + b) * c"},
                {"source": "c = a * b\nL = c + a", "values": {"a": 2, "b": 3}},
                {"source": "d = a + a", "values": {"a": 3}, "mode": "overwrite"},
            ]
        },
    )

    source: str = Field(
        description="The program, e.g. `a = 2; b = -3; c = 10; f = (a + b) * c`. An empty "
        "program is refused with a 400 `SyntaxError` that says so.",
        json_schema_extra={"minLength": 1},
    )
    # Strict: `true` or `"3"` is a malformed request (422), not silently 1.0 or 3.0.
    values: dict[str, StrictFloat] | None = Field(
        default=None, description="Leaf values by name; they override values in the program."
    )
    # Strict too: `0`, `"true"` or `"yes"` is a malformed request (422), as the schema says.
    expand_derived: StrictBool = Field(
        default=Options.expand_derived,
        description="Build `-`, `/` and unary minus from primitives.",
    )
    mode: Literal["correct", "overwrite"] = Field(
        default=Options.mode, description="`overwrite` shows the `=`-instead-of-`+=` bug."
    )
    order: list[str] | None = Field(
        default=Options.order, description="Backward visit order chosen by the student (node ids)."
    )
    target: str | None = Field(
        default=Options.target,
        max_length=200,
        description="The node whose gradients to compute (a node id such as `n4`, or a name "
        "such as `c`): grads are ∂target/∂x; the root when absent. Not with `mode` or `order`.",
    )
    pass_: Literal["reverse", "forward"] = Field(
        default=Options.pass_,
        alias="pass",
        description="`forward`: the timeline is forward mode's, each node's tangent ∂node/∂wrt "
        "carried from the leaves to the root with its value (needs `wrt`; not with `mode`, "
        "`order` or `target`). `reverse` (the default): the backward pass.",
    )
    # The schema says what the server refuses (issue 36, schemathesis): an empty `wrt` is no
    # leaf, and the server answers it a 400 `BadWrt` that says so (as it does `wrt` in reverse
    # mode, which a schema of independent fields cannot say).
    wrt: str | None = Field(
        default=Options.wrt,
        max_length=200,
        description="Forward mode's leaf: its name in the program (`a`) or its id (`n0`); "
        "null (or absent) in reverse mode.",
        json_schema_extra={"minLength": 1},
    )
    lang: Lang | None = LANG_FIELD

    def options(self) -> Options:
        """What this request asks besides its program and values (engine.Options: the cache
        keys, the structure id and the engine's call are made of all of it)."""
        return Options.of(self)

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


class ResponsePart(BaseModel):
    """A part of a response: the schema lists every field that is sent and no other
    (`additionalProperties: false`), so a field the engine adds without documenting it here
    fails tests/app/test_openapi_contract.py. Responses are sent as pre-encoded bytes
    (app.responses.JSONBytes), never validated through these models on the hot path."""

    model_config = ConfigDict(extra="forbid")


# The operations as the API names them (`**` also for a constant power, with `exponent` set).
TableOp = Literal[tuple(sorted({op.public for op in OPS.values()}))]  # type: ignore[valid-type]
# A call of a function the program defines is named by the function (`softplus`).
FunctionName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", max_length=100_000)]
Op = TableOp | FunctionName
NodeWarningType = Literal["division_by_zero", "overflow", "domain"]
WarningType = Literal[
    "unused", "alias", "unknown_value", "never_visited", "late", "skipped", "pasted"
]


class NodeWarning(ResponsePart):
    type: NodeWarningType = Field(
        description="`division_by_zero` (±inf or nan from x/0, log(0), 0**-1), `overflow` "
        "(a finite input made ±inf) or `domain` (nan: log(-1), (-8)**(1/3))."
    )
    message: str


class Node(ResponsePart):
    id: str = Field(description="`n0`, `n1`, … in the order the nodes were built.")
    label: str = Field(
        description="What the card shows (micrograd's `draw_dot` label): the label the program "
        "sets (`Value(2.0, label='x1')`, `x1w1.label = 'x1*w1'`), else the name the node is "
        "assigned to (`c`, `c₂`), a constant's literal, or empty."
    )
    name: str = Field(
        description="The program's handle for the node: the name it is assigned to (`x1w1`, "
        "`c₂` for a name's second version; a leaf's name, the key of `values`), or empty."
    )
    text: str = Field(description="How narration names the node: its label or its formula.")
    op: Op | None = Field(
        description="The operation; null for leaves and constants. A call of a function the "
        "program defines is named by it (`softplus`; see `functions`)."
    )
    exponent: Number | None = Field(description="The constant power of `x**k`; else null.")
    kind: Literal["leaf", "const", "op"]
    data: Number
    grad: Number = Field(description="The gradient of the variant shown (`mode`, `order`).")
    correct_grad: Number = Field(description="The gradient of a correct backward pass.")
    derived: bool = Field(
        description="`-`, `/`, unary minus (built from primitives) or a call of a function "
        "the program defines (built from its body)."
    )
    expansion: str | None = Field(
        description="The primitives a derived node stands for; for a call of the program's "
        "function, its body with the arguments in place of the parameters."
    )
    span: tuple[int, int] = Field(description="[start, end) offsets in `source`.")
    inputs: list[str] = Field(description="Input ids in order.")
    warnings: list[NodeWarning]
    group: str = Field(description="The id of the node's group (`g0`, `g1`, … in `groups`).")
    tangent: Number | None = Field(description="Forward mode's ∂node/∂wrt; null in reverse mode.")
    x: float = Field(description="Centre of the card, px from the left.")
    y: float = Field(description="Centre of the card, px from the top (y grows downward).")
    width: float = Field(description="Card width, px.")
    height: float = Field(description="Card height, px.")


class Edge(ResponsePart):
    id: str
    source: str = Field(description="The input's id.")
    target: str = Field(description="The consumer's id.")
    index: int = Field(description="Input position in the consumer's ordered inputs.")
    local_grad: Number


class Leaf(ResponsePart):
    name: str = Field(description="The leaf's name: its key in `values`, its slider's id.")
    label: str = Field(description="Its display label (the slider's caption): the node's `label`.")
    id: str
    value: Number


class Steps(ResponsePart):
    """The timeline as columns (docs/api.md, "Steps"): one entry per step in `phase`, `node` and
    `template`; one per step of the sort (the first steps) in `action` and `input_index`; the
    backward pass's numbers as the numbers reply's arrays. Readers turn them into one object a
    step: `engine.step_reader.step_objects` (Python), `stepObjects`
    (static/js/core/step-columns.js)."""

    phase: list[Literal["topo", "forward", "seed", "backward", "tangent"]] = Field(
        description="Per step: topo, then forward, seed, backward; in forward mode, topo and "
        "tangent."
    )
    node: list[Annotated[int, Field(ge=0)]] = Field(
        description="Per step: the index of its node (its id is `n` + the index)."
    )
    template: list[Annotated[int, Field(ge=0)]] = Field(
        description="Per step: its narration's pattern, an index into `templates`."
    )
    templates: list[str] = Field(
        description="The patterns: narration templates with their numbers as slots, "
        "`{n:ARRAY:INDEX}` (the number as formatted) or `{f:ARRAY:INDEX}` (as a factor), read "
        "from the numbers arrays of `POST /api/values`, and each node they name as "
        "`{t:text:INDEX}` (its `text`). INDEX is a number or names a part of the step: `node`, "
        "`in<j>` (its node's j-th input), `e<j>` (its j-th input edge), `c<j>` (the j-th "
        "contribution of its visit), `visit` (its position among the backward steps)."
    )
    action: list[Literal["start", "visit", "skip", "emit"]] = Field(
        description="Per step of the sort (steps 0 to len(action) - 1): what it does."
    )
    input_index: list[Annotated[int, Field(ge=0)] | None] = Field(
        description="Per step of the sort: the input index it pops and looks at (null at the "
        "start)."
    )
    step_grad: list[Number] = Field(
        description="Per backward step: the node's gradient when visited (its contributions' "
        "upstream); as in the numbers reply."
    )
    contribution: list[Number] = Field(
        description="Per contribution (a backward step's, one per input edge of its node, in "
        "order): upstream × local."
    )
    grad_before: list[Number] = Field(description="Per contribution.")
    grad_after: list[Number] = Field(description="Per contribution.")
    lost: list[Annotated[int, Field(ge=0)]] = Field(
        description="The contributions overwritten by a later one (mode `overwrite`), by index."
    )
    late: list[Annotated[int, Field(ge=0)]] = Field(
        description="The contributions that arrived after their target was visited (`order`)."
    )
    tangent_contribution: list[Number] | None = Field(
        description="Forward mode: per edge, its input's tangent × local; null in reverse mode."
    )


class GradCheckResult(ResponsePart):
    name: str
    id: str
    analytic: Number
    numeric: Number
    status: Literal["pass", "fail", "kink", "imprecise", "nonfinite"] = Field(
        description="`kink`: the one-sided differences disagree (a relu corner); `imprecise`: "
        "the disagreement is within float64 rounding at this eps (large values)."
    )


class GradCheck(ResponsePart):
    eps_rule: str
    checked: int
    total: int
    capped: bool
    results: list[GradCheckResult]


class ProgramWarning(ResponsePart):
    """A warning about the program. At most ten of one type are listed; where there are more,
    an eleventh of that type says how many (`and 40 more statements from line 11 on are not
    used by …`)."""

    type: WarningType
    message: str
    line: int | None
    column: int | None


class OrderCheck(ResponsePart):
    valid: bool = Field(description="Whether `order` is a reverse topological order.")
    message: str


class Box(ResponsePart):
    x: float = Field(description="Centre, px from the left.")
    y: float = Field(description="Centre, px from the top.")
    width: float
    height: float


class Group(ResponsePart):
    """The nodes one statement built, or one leaf: drawn in a labelled box, collapsible to one
    card."""

    id: str = Field(description="`g0`, `g1`, … in the order the statements built them.")
    name: str = Field(description="How narration names the root: the statement's name (`h1`).")
    kind: Literal["statement", "leaf"] = Field(
        description="`leaf`: a leaf, a group of its own (other statements read it too)."
    )
    root: str = Field(description="The id of the group's value: the statement's result.")
    nodes: list[str] = Field(description="The ids of its nodes, in id order.")
    box: Box | None = Field(
        description="The labelled box around its cards (the name goes in its top band); null "
        "for a group of one card."
    )
    card: Box = Field(description="Its card in the collapsed layout (`layout.collapsed`).")


class OverviewLayer(ResponsePart):
    name: str = Field(
        description="The place its statements are named after, up to the first "
        "index (`model.layers[1]`), or a statement's own name (`total_loss`)."
    )
    groups: list[str] = Field(description="Its statements' group ids, in build order.")


class OverviewPart(ResponsePart):
    """A sample's forward pass, the statements of the parameters alone, or those combining
    samples (engine/overview.py)."""

    id: str = Field(description="`p0`, `p1`, …: the samples in order, then the others.")
    kind: Literal["sample", "parameters", "combined"]
    index: int = Field(description="A sample's number from 1; 0 for the other parts.")
    name: str = Field(description="A sample's data leaves (`v1, v2`); else its kind.")
    root: str = Field(description="Its last statement's group id: the part's value.")
    inputs: list[str] = Field(description="A sample's data leaves' group ids; else empty.")
    layers: list[OverviewLayer]


class Overview(ResponsePart):
    """The level above the statements (docs/api.md, "Overview"): every statement in one part."""

    parts: list[OverviewPart]


class CollapsedLayoutInfo(ResponsePart):
    engine: Literal["dot", "sugiyama"]
    width: float = Field(description="Width of the collapsed drawing, px.")
    height: float = Field(description="Height of the collapsed drawing, px.")


class LayoutInfo(ResponsePart):
    engine: Literal["dot", "sugiyama"] = Field(description="`sugiyama` is the fast fallback.")
    width: float = Field(description="Width of the drawing, px; every card fits inside.")
    height: float = Field(description="Height of the drawing, px.")
    cached: bool = Field(description="True when the layout came from the structure cache.")
    collapsed: CollapsedLayoutInfo = Field(
        description="The layout with every group collapsed to one card (`groups[].card`)."
    )


class Function(ResponsePart):
    """A function the program defines (`softplus(x) = log(1 + exp(x))`) that the graph calls."""

    name: str
    params: list[str] = Field(description="Its parameters, in order.")
    definition: str = Field(description="`name(params) = body`, blanks collapsed.")
    line: int = Field(description="The 1-based line it is defined on.")
    span: tuple[int, int] = Field(description="[start, end) offsets of the definition.")
    nodes: int = Field(description="How many nodes a call stands for when expanded.")
    formula: str = Field(description="How a call is written (`{0}`, `{1}`: the arguments).")
    locals: list[str] = Field(
        description="Each local derivative as a formula (`∂softplus/∂x({0})`): computed by "
        "the engine's backward pass through the body at the call's arguments."
    )
    micrograd: str = Field(description="The body as a micrograd script's `def` returns it.")
    torch: str = Field(description="The body as a PyTorch script's `def` returns it.")
    uses: list[str] = Field(
        description="Keys of the table's ops the body applies (whose script helpers it needs)."
    )


Flag = Literal["vanishing", "exploding", "dead", "saturated"]
GRAD_FLAGS = Field(
    description="Node id → its flags, only nodes that have any: `vanishing` (|grad| below 1e-6 "
    "of the largest), `exploding` (|grad| above 1e6), `dead` (exactly 0 behind a ReLU at ≤ 0 "
    "or a saturated tanh/sigmoid), `saturated` (a tanh with |t| > 0.999, or a sigmoid as flat)."
)


class GraphResponse(ResponsePart):
    """The engine's trace (docs/api.md) plus a box for every node and `layout`."""

    nodes: list[Node]
    edges: list[Edge]
    groups: list[Group] = Field(description="Every node in exactly one group.")
    overview: Overview | None = Field(
        description="The statements by sample, part and layer; null without parameters at "
        "places or with fewer than two samples."
    )
    root: str
    target: str = Field(description="The node whose gradients these are (`root` by default).")
    off_target: list[str] = Field(
        description="Ids of the nodes `target` does not depend on: grad 0, greyed out."
    )
    pass_: Literal["reverse", "forward"] = Field(alias="pass", description="As requested.")
    wrt: str | None = Field(description="Forward mode's leaf (its id); null in reverse mode.")
    leaves: list[Leaf]
    functions: list[Function] = Field(
        description="The functions the program defines that the graph calls, by line."
    )
    steps: Steps = Field(
        description="The timeline, as columns: topo, forward, seed, backward; in forward mode, "
        "topo and tangent."
    )
    gradcheck: GradCheck
    warnings: list[ProgramWarning]
    grad_flags: dict[str, list[Flag]] = GRAD_FLAGS
    mode: Literal["correct", "overwrite"]
    order: list[str] | None
    order_check: OrderCheck | None = Field(description="Null unless `order` was given.")
    source: str
    structure: str = Field(
        description="An id of everything but the leaf values that the nodes, edges and steps "
        "depend on: send it to `POST /api/values` to get only the numbers of new values."
    )
    layout: LayoutInfo


# ---- A tensor program's reply (docs/api.md, "Tensor programs") --------------------------------

# A tensor's numbers, row-major: a number for a 0-d tensor, else lists nested as deep as its dims.
Nested = Number | list[Any]


class TensorWarning(ResponsePart):
    type: NodeWarningType
    count: int = Field(description="How many of the tensor's elements carry it.")


class TensorRule(ResponsePart):
    input: str = Field(description="The input's id.")
    rule: str = Field(
        description="How the op passes gradient to that input, with the tensors' names "
        "(`dW = X.T @ d(X @ W)`; a broadcast input's gradient is summed: `db = d(…).sum(0)`)."
    )


class TensorNode(ResponsePart):
    """A tensor of the program: its shape and its elements' numbers, row-major."""

    id: str = Field(description="`t0`, `t1`, … in the order the program made them.")
    name: str = Field(description="The name it is assigned to; empty for an unnamed result.")
    label: str = Field(description="Its name, else its source text (at most 32 characters).")
    op: str | None = Field(
        description="The tensor op that made it (`@`, `+`, `-`, `*`, `/`, `**`, `neg`, a "
        "function of the op table, `sum`, `mean`, `max`, `transpose`, `view`, `reshape`, `[]`, "
        "`cat`, `one_hot`, `softmax`, `log_softmax`, `cross_entropy`, `float`); null for a "
        "tensor the "
        "program writes or draws (`tensor([[…]])`, `randn`, `zeros`, `ones`, `randint`)."
    )
    kind: Literal["leaf", "const", "op"] = Field(
        description="`leaf`: a float tensor the program makes; `const`: one no gradient "
        "reaches (an integer tensor, `one_hot`)."
    )
    dtype: Literal["float", "int"]
    shape: list[int]
    data: Nested = Field(description="The elements' data, nested row-major lists.")
    grad: Nested | None = Field(
        description="The elements' gradients (∂root/∂element), as `data`; null for an "
        "integer tensor."
    )
    span: tuple[int, int] = Field(description="[start, end) offsets in `source`.")
    inputs: list[str] = Field(description="Input tensor ids in order.")
    args: dict[str, Any] = Field(
        description="The op's arguments: `dim`, `keepdim`, `dims`, `shape`, `exponent`, "
        "`num_classes`, `index` (ints and tensor ids), `argmax` (per output element)."
    )
    rules: list[TensorRule] = Field(description="Per float input, its gradient's rule.")
    elements: tuple[int, int] = Field(
        description="[first, end) ids of the scalar nodes the op built (its elements last)."
    )
    warnings: list[TensorWarning]


class TensorLeaf(ResponsePart):
    name: str = Field(
        description="The leaf's name; its element `W[1,2]` is the key of `values` that sets it."
    )
    id: str
    shape: list[int]


class TensorGrad(ResponsePart):
    input: str = Field(description="The input tensor's id.")
    grad: Nested = Field(description="What this op passed back to it, its shape.")
    rule: str = Field(description="The rule that made it, as in the node's `rules`.")


class TensorStep(ResponsePart):
    phase: Literal["forward", "seed", "backward"]
    node: str = Field(description="The tensor (op) of the step.")
    grads: list[TensorGrad] | None = Field(
        description="Backward steps: the gradient each float input received; else null."
    )


class TensorSize(ResponsePart):
    tensors: int
    elements: int = Field(description="Elements of all tensors (bounded as nodes are).")
    nodes: int = Field(description="Scalar nodes built: each a `Value` of the op table.")


class TensorGraphResponse(ResponsePart):
    """The reply for a tensor program (docs/api.md, "Tensor programs")."""

    kind: Literal["tensor"]
    nodes: list[TensorNode]
    root: str = Field(description="The id of the result: one element, where backward starts.")
    leaves: list[TensorLeaf]
    steps: list[TensorStep] = Field(
        description="The tensor-level timeline: a forward step per op, the seed, a backward "
        "step per op the result depends on (last op first)."
    )
    size: TensorSize
    warnings: list[ProgramWarning]
    source: str


# The examples' structure id is this server's for their body: app/main.py fills it in.
STRUCTURE_OF_EXAMPLE = "(the structure id of this body's /api/graph reply)"


class ValuesRequest(GraphRequest):
    """The body of `POST /api/values`: the `/api/graph` body plus the structure id of the
    trace the client holds."""

    structure: str = Field(description="The `structure` of the client's /api/graph reply.")

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "source": "a = 2\nb = -3\nc = a * b\nL = c + a",
                    "values": {"a": 4},
                    "mode": "overwrite",
                    "structure": STRUCTURE_OF_EXAMPLE,
                }
            ]
        },
    )


class ValuesResponse(ResponsePart):
    """The numbers of a trace the client already has, as arrays in its order (docs/api.md).
    (The schema's example is in the overwrite mode: FastAPI drops nulls from examples, and in
    the correct mode `correct_grad` is null.)"""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "structure": STRUCTURE_OF_EXAMPLE,
                    "data": [4.0, -3.0, -12.0, -8.0],
                    "grad": [-3.0, 4.0, 1.0, 1.0],
                    "correct_grad": [-2.0, 4.0, 1.0, 1.0],
                    "local_grad": [-3.0, 4.0, 1.0, 1.0],
                    "step_grad": [1.0, 1.0, 4.0, -3.0],
                    "contribution": [1.0, 1.0, -3.0, 4.0],
                    "grad_before": [0.0, 0.0, 1.0, 0.0],
                    "grad_after": [1.0, 1.0, -3.0, 4.0],
                    "gradcheck": {
                        "eps_rule": "1e-6·max(1,|x|)",
                        "checked": 2,
                        "total": 2,
                        "capped": False,
                        "results": [
                            {
                                "name": "a",
                                "id": "n0",
                                "analytic": -2.0,
                                "numeric": -1.9999999996134221,
                                "status": "pass",
                            },
                            {
                                "name": "b",
                                "id": "n1",
                                "analytic": 4.0,
                                "numeric": 3.9999999999669926,
                                "status": "pass",
                            },
                        ],
                    },
                    "warnings": [],
                    "node_warnings": {},
                    "grad_flags": {},
                }
            ]
        },
    )

    structure: str
    data: list[Number] = Field(description="Per node, in `nodes` order.")
    grad: list[Number] = Field(description="Per node.")
    correct_grad: list[Number] | None = Field(
        description="Per node; null when it equals `grad` everywhere (the correct mode)."
    )
    local_grad: list[Number] = Field(description="Per edge, in `edges` order.")
    step_grad: list[Number] = Field(
        description="The `grad` of each backward step, in order: the `upstream` of its "
        "contributions (whose `local` is their edge's `local_grad`)."
    )
    contribution: list[Number] = Field(
        description="Per contribution: every backward step's `contributions`, flattened."
    )
    grad_before: list[Number]
    grad_after: list[Number]
    gradcheck: GradCheck
    warnings: list[ProgramWarning]
    node_warnings: dict[str, list[NodeWarning]] = Field(
        description="Node id → that node's warnings, only nodes that have any."
    )
    grad_flags: dict[str, list[Flag]] = GRAD_FLAGS
    tangent: list[Number] | None = Field(
        description="Forward mode: per node, ∂node/∂wrt; null in reverse mode."
    )
    tangent_contribution: list[Number] | None = Field(
        description="Forward mode: per edge, its input's tangent × local; null in reverse mode."
    )


class LessonQuestion(ResponsePart):
    node: str = Field(description="The id of the node whose number is asked.")
    name: str = Field(description="The node's name as the lesson writes it.")
    of: Literal["grad", "data"]
    why: str = Field(description="The computation, shown once the learner has answered.")


class LessonStop(ResponsePart):
    text: str = Field(description="The paragraph; `backticks` mark inline math.")
    step: int = Field(description="The index in `steps` (of /api/graph) the stop shows.")
    highlight: list[str] = Field(
        description="Ids of the nodes (`n3`) and edges (`e2`) the stop points at."
    )
    question: LessonQuestion | None
    pass_: Literal["reverse", "forward"] = Field(
        alias="pass", description="The pass the stop shows (its `step` is of that timeline)."
    )
    wrt: str | None = Field(description="Forward mode's leaf (a name); null in reverse mode.")
    fan_in: str | None = Field(
        description="A tensor lesson's gradient cell whose fan-in the stop opens, as the page "
        "keys cells (`t1|grad|1,2`); null otherwise."
    )


class Lesson(ResponsePart):
    id: str
    kind: Literal["scalar", "tensor"] = Field(
        description="`tensor`: its program is a tensor program, its stops name tensors (`t3`) "
        "and cells (`t3|grad|1,2`) of the tensor reply."
    )
    title: str
    summary: str
    source: str
    values: dict[str, float]
    stops: list[LessonStop]


class Preset(ResponsePart):
    id: str
    title: str
    source: str
    values: dict[str, float]
    note: str


ErrorType = Literal[
    # the program (400), from the engine
    "SyntaxError",
    "NeedsRunning",
    "UnknownFunction",
    "ArgumentCount",
    "UseBeforeAssign",
    "AssignedTwice",
    "BadFunction",
    "LimitExceeded",
    "BadValue",
    "BadOrder",
    "BadTraining",
    "BadLandscape",
    "BadTarget",
    "BadLeaf",
    "BadWrt",
    "ShapeError",
    "TensorProgram",
    # the request and the server
    "StaleStructure",
    "InvalidRequest",
    "BadRequest",
    "BodyTooLarge",
    "RateLimited",
    "NotFound",
    "MethodNotAllowed",
    "ExportTooLarge",
    "ExportFailed",
    "GraphvizUnavailable",
    "Unavailable",
    "HTTPError",
    "InternalError",
]


class ErrorDetail(ResponsePart):
    type: ErrorType = Field(
        description="Program errors (400): `SyntaxError`, `NeedsRunning` (Python that must run "
        "before its graph can be read: a class, a function, a loop, a list, a random number), "
        "`UnknownFunction`, `ArgumentCount`, `BadFunction` (a function the program defines "
        "that cannot be: recursion, a taken name, a body using a name that is no parameter), "
        "`UseBeforeAssign`, `AssignedTwice`, `LimitExceeded`, `BadValue`, `BadOrder`, "
        "`BadTarget`, `BadLeaf` (/api/paths), `BadWrt` (forward mode's leaf), "
        "`BadTraining` (/api/descend), `BadLandscape` (/api/landscape), `ShapeError` (a tensor "
        "program's shapes an op cannot take: `(3, 2) @ (3, 3)`), `TensorProgram` (a tensor "
        "program sent where only scalar programs are read: /api/values, /api/export, …); "
        "a malformed request (422): `InvalidRequest`; `StaleStructure` (409, /api/values); "
        "`BodyTooLarge` (413), `RateLimited` "
        "(429), `ExportTooLarge` (400), `GraphvizUnavailable`/`ExportFailed`/`Unavailable` "
        "(503)."
    )
    message: str
    line: int | None = Field(description="1-based; null when the error is not about the source.")
    column: int | None = Field(description="1-based; null when not about the source.")
    end_line: int | None
    end_column: int | None = Field(description="Exclusive.")
    snippet: str = Field(description="The source line of the error (a window of a long line).")
    caret: str = Field(description="Spaces then `^^^` under the offending text.")


class ErrorResponse(ResponsePart):
    """The one error shape of every endpoint."""

    error: ErrorDetail


class LaneLoad(ResponsePart):
    waiting: int = Field(description="Programs waiting for this lane's helper process.")
    running: int = Field(description="Programs being traced in it now.")


class OffloadLoad(ResponsePart):
    threads: LaneLoad = Field(
        description="Programs shorter than `offload_min_source_chars`, traced in this worker."
    )
    small: LaneLoad = Field(description="Helper process: shorter than `offload_big_source_chars`.")
    big: LaneLoad = Field(description="Helper process: the longer ones, never ahead of the rest.")


class HealthDetail(ResponsePart):
    offload: OffloadLoad = Field(description="This worker's helper processes (docs/api.md).")
    graphviz_running: int = Field(description="Graphviz processes running for this worker.")
    graphviz_slots: int = Field(description="How many may run at once before a 503 `Busy`.")


class Health(ResponsePart):
    status: Literal["ok"]
    version: str
    graphviz: bool
    graphviz_version: str | None
    detail: HealthDetail = Field(description="The load of the worker that answered.")


class TrainingRequest(BaseModel):
    """What the Train lab's requests share: the leaf names they carry must be valid text."""

    @field_validator("values", "velocity", check_fields=False)
    @classmethod
    def _names_are_text(cls, values: dict[str, float] | None) -> dict[str, float] | None:
        for name in values or ():
            _require_text(name)
        return values

    @field_validator("parameters", check_fields=False)
    @classmethod
    def _parameters_are_text(cls, parameters: list[str]) -> list[str]:
        for name in parameters:
            _require_text(name)
        return parameters


class DescendRequest(TrainingRequest):
    """Gradient descent on a program's leaves: the body of `POST /api/descend`."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "source": "w = 0\nb = 0\nloss = (w*2 + b - 5)**2",
                    "parameters": ["w", "b"],
                    "lr": 0.3,
                    "steps": 3,
                }
            ]
        },
    )

    source: str = Field(description="The program.", json_schema_extra={"minLength": 1})
    values: dict[str, StrictFloat] | None = Field(
        default=None, description="Leaf values by name where descent starts."
    )
    parameters: list[str] = Field(
        description="The leaves to train (names); each step moves them against the gradient.",
        json_schema_extra={"minItems": 1, "items": {"type": "string", "minLength": 1}},
    )
    lr: StrictFloat = Field(description="The learning rate: a finite number above 0.")
    steps: StrictInt = Field(description="How many steps, 1 to 200 (a work bound may lower it).")
    momentum: StrictFloat = Field(
        default=0.0, description="0 for plain gradient descent; up to (not including) 1."
    )
    velocity: dict[str, StrictFloat] | None = Field(
        default=None, description="The last reply's `velocity`, to continue momentum."
    )
    baseline: StrictFloat | None = Field(
        default=None,
        description="The root where training began (default: this request's first root); "
        "descent stops when the root climbs above it.",
    )
    first_step: StrictInt = Field(
        default=0, description="Steps already taken (a later batch): `stopped.step` counts on."
    )
    lang: Lang | None = LANG_FIELD


class DescentStop(ResponsePart):
    step: int = Field(description="The step at which descent stopped (0: it could not start).")
    reason: Literal["diverged", "nonfinite"]
    message: str = Field(description="What happened and the learning rate to try instead.")


class DescendResponse(ResponsePart):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "parameters": ["w", "b"],
                    "roots": [25.0, 100.0],
                    "values": [[6.0, 3.0]],
                    "velocity": {"w": -20.0, "b": -10.0},
                    "stopped": {
                        "step": 1,
                        "reason": "diverged",
                        "message": "Stopped at step 1: the root rose from 25 to 100. The "
                        "learning rate 0.3 is too large here; try 0.03.",
                    },
                }
            ]
        },
    )

    parameters: list[str] = Field(description="The trained leaves, in the order of `values`.")
    roots: list[Number] = Field(
        description="The root after k steps, k = 0 (the starting values) to the last step."
    )
    values: list[list[Number]] = Field(
        description="The parameters after each step (one row per step, `parameters` order)."
    )
    velocity: dict[str, Number] = Field(
        description="The momentum term after the last step (the last gradient when momentum "
        "is 0): pass it back as `velocity` to continue."
    )
    stopped: DescentStop | None = Field(description="Why descent stopped early, or null.")


class LandscapeRequest(TrainingRequest):
    """The loss landscape of two leaves: the body of `POST /api/landscape`."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "source": "w = 0\nb = 0\nloss = (w*2 + b - 5)**2",
                    "parameters": ["w", "b"],
                    "x_range": [-1.0, 3.0],
                    "y_range": [-2.0, 2.0],
                    "points": 5,
                }
            ]
        },
    )

    source: str = Field(description="The program.", json_schema_extra={"minLength": 1})
    values: dict[str, StrictFloat] | None = Field(
        default=None, description="Leaf values by name: every leaf but the two stays there."
    )
    # The counts and the empty name are refused by the server with a 400 `BadLandscape` that
    # says what to change; the schema says the same (issue 36: schemathesis found `[0]` and
    # `[""]` valid by the schema and refused by the server).
    parameters: list[str] = Field(
        description="Two leaves: the first along x (columns), the second along y (rows).",
        json_schema_extra={
            "minItems": 2, "maxItems": 2, "items": {"type": "string", "minLength": 1}
        },
    )  # fmt: skip
    x_range: list[StrictFloat] = Field(
        description="[lowest, highest] value of the first parameter (finite, lowest first).",
        json_schema_extra={"minItems": 2, "maxItems": 2},
    )
    y_range: list[StrictFloat] = Field(
        description="The same for the second parameter.",
        json_schema_extra={"minItems": 2, "maxItems": 2},
    )
    points: StrictInt = Field(
        description="Grid points a side, 2 to 61, ends included (a work bound may lower it)."
    )
    lang: Lang | None = LANG_FIELD


class LandscapeResponse(ResponsePart):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "parameters": ["w", "b"],
                    "xs": [0.0, 2.0],
                    "ys": [0.0, 1.0],
                    "losses": [[25.0, 1.0], [16.0, 0.0]],
                }
            ]
        },
    )

    parameters: list[str] = Field(description="The two leaves, as asked.")
    xs: list[float] = Field(description="The first parameter's values, evenly spaced.")
    ys: list[float] = Field(description="The second parameter's values.")
    losses: list[list[Number]] = Field(
        description="`losses[i][j]`: the root with the first parameter at `xs[j]` and the "
        "second at `ys[i]`, every other leaf at `values`: one forward pass of the engine each."
    )


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """`responses=` for a route: each status with the one error shape and what it means."""
    return {status: {"model": ErrorResponse, "description": ERRORS[status]} for status in statuses}


ERRORS = {
    400: "The program is not valid (type, message, 1-based line and column, snippet, caret).",
    404: "No such page or endpoint.",
    409: "The structure id names another graph than this body's (`StaleStructure`): post the "
    "program to /api/graph again.",
    413: "The request body is over the limit (`BodyTooLarge`).",
    422: "The request is malformed (`InvalidRequest`): not JSON, not an object, a wrong field "
    "or type, a number too large for a float.",
    429: "Too many requests from this client (`RateLimited`); see the `Retry-After` header.",
    503: "The server cannot do it now: too many big programs or drawings wait already "
    "(`Busy`, with `Retry-After`), the process tracing it stopped (`Unavailable`), or "
    "Graphviz is missing or failed (export: `GraphvizUnavailable`, `ExportFailed`).",
}
