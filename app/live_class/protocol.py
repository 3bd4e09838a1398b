"""The messages of a class's WebSocket (docs/live-class.md), validated before anything reads them.

Every message is one JSON object with a `type`. A client says `hello` first (a teacher with the
token, a student with the id the server gave it, if any, and maybe a nickname); after that a
teacher sends `view`, `mode`, `ask`, `reveal`, `lock`, `remove` and `end`, a student `answer`
and `name`. The server sends `welcome`, `snapshot` (the whole current state of the class, never
a delta, so a lost one costs nothing), `answers` (a count) and `students` (the roster: who is
connected) to the teacher, `ack` (an answer is stored), `removed` (to a student the teacher
removed) and `error`.

The view is exactly what a student's page applies: the page store's keys (camelCase on the wire).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, TypeAdapter
from pydantic.alias_generators import to_camel

from chainrule.app.api.schemas import Lang, NonFinite, ResponsePart
from chainrule.app.api.tensor_schemas import MAX_DIMS

# A leaf's name, or a tensor leaf's element (`W[1,2]`, docs/tensors.md).
LeafName = Annotated[
    str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,63}(\[[0-9]{1,6}(,[0-9]{1,6}){0,7}\])?$")
]
ShortId = Annotated[str, Field(max_length=64, pattern=r"^[A-Za-z0-9_-]*$")]
Mode = Literal["follow", "paused", "free"]
# A student's answer: a number, or a non-finite value named as the API names them.
AnswerValue = StrictFloat | NonFinite

MAX_STEP = 10_000_000
MAX_LEAVES = 1_000
MAX_INDEX = 999_999  # a tensor cell's index: each integer at most this (LeafName's 6 digits)


class Model(BaseModel):
    model_config = ConfigDict(
        extra="forbid", alias_generator=to_camel, populate_by_name=True, frozen=True
    )


class View(Model):
    """What every following student sees: the teacher's program, values, toggles and place."""

    source: str = ""
    values: dict[LeafName, StrictFloat] = Field(default_factory=dict, max_length=MAX_LEAVES)
    preset_id: ShortId = ""
    expand_derived: bool = False
    final_grads: bool = False
    fold_constants: bool = False
    grad_map: bool = False
    view3d: bool = Field(default=False, alias="view3d")  # the store's key, not view3D
    lesson_id: ShortId = ""
    # Strict, as the schema's `integer` reads: 847.0 is a malformed view (422), not 847.
    lesson_stop: StrictInt = Field(default=0, ge=0, le=10_000)
    step: StrictInt = Field(default=0, ge=0, le=MAX_STEP)


class Hello(Model):
    type: Literal["hello"]
    role: Literal["teacher", "student"]
    token: str | None = Field(default=None, max_length=128)
    student: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_-]{16,64}$")
    name: str = Field(default="", max_length=400)
    lang: Lang = "en"


class SetView(Model):
    type: Literal["view"]
    view: View


class SetMode(Model):
    type: Literal["mode"]
    mode: Mode


class Ask(Model):
    """Ask the class for a value the pulse has not shown: a node's gradient (`grad`) or data
    (`data`, a lesson's question), or one edge's contribution (`contribution`); on a tensor
    program, one cell of a tensor's gradient or data (`tensor`: its id `t3` or the name the
    program assigns it, `index`: the cell's, one integer per dim). Which of these a question
    needs, and that they name something of the class's program, is the answer key's to say
    (questions.py: a BadQuestion, in the teacher's language)."""

    type: Literal["ask"]
    kind: Literal["grad", "data", "contribution"]
    node: str | None = Field(default=None, pattern=r"^n[0-9]{1,6}$")
    edge: str | None = Field(default=None, pattern=r"^e[0-9]{1,7}$")
    tensor: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
    index: list[Annotated[StrictInt, Field(ge=0, le=MAX_INDEX)]] | None = Field(
        default=None, max_length=MAX_DIMS
    )
    label: str = Field(max_length=120)


class Reveal(Model):
    type: Literal["reveal"]
    names: bool = False


class End(Model):
    type: Literal["end"]


class Lock(Model):
    """Let new students join, or not (those who joined come back whatever it says)."""

    type: Literal["lock"]
    locked: bool


class Remove(Model):
    """Remove a student, named by its roster id (`students` message: never the student's own)."""

    type: Literal["remove"]
    student: str = Field(pattern=r"^[0-9a-f]{12}$")


class Answer(Model):
    type: Literal["answer"]
    question: ShortId
    value: AnswerValue
    seq: int = Field(ge=0, le=2**31)


class Rename(Model):
    type: Literal["name"]
    name: str = Field(max_length=400)


TeacherMessage = Annotated[
    SetView | SetMode | Ask | Reveal | Lock | Remove | End, Field(discriminator="type")
]
StudentMessage = Annotated[Answer | Rename, Field(discriminator="type")]
ClientMessage = Annotated[
    Hello | SetView | SetMode | Ask | Reveal | Lock | Remove | End | Answer | Rename,
    Field(discriminator="type"),
]
client_message = TypeAdapter(ClientMessage)
TEACHER_TYPES = frozenset({"view", "mode", "ask", "reveal", "lock", "remove", "end"})


class ClassCreate(Model):
    """The body of `POST /api/class`: the view the class opens on."""

    view: View
    lang: Lang | None = None


class ClassCreated(ResponsePart):
    """A new class: its code (`K7Q4MX`), as shown (`K7Q-4MX`), the join path, and the teacher's
    token (kept by the teacher's page only; it is never part of a URL)."""

    code: str
    shown_code: str
    join_path: str
    token: str
    max_students: int
    idle_expiry_s: int


class ClassInfo(ResponsePart):
    """`GET /api/class/{code}`: the class exists; how many may join."""

    code: str
    shown_code: str
    max_students: int
