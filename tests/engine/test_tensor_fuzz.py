"""Whatever a tensor program is, it is answered: a reply, or a ProgramError with its position
(the API's 400), never another exception (a 500). Programs are soups of the language's own
words after a few valid definitions, so they reach deep into the ops."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chainrule import engine
from chainrule.engine.builder import Limits
from chainrule.engine.ops import FUNCTIONS
from chainrule.engine.tensor_program import trace_tensors
from chainrule.engine.tensor_reply import tensor_reply

PREFIX = (
    "A = randn(3, 2, seed=1)\nB = randn(2, 4, seed=2)\nv = ones(4)\n"
    "X = tensor([[0, 2], [1, 1]])\nY = tensor([1, 0, 3])\nC = randn(3, 5, seed=3)\n"
)
WORDS = (
    "A B v X Y C L h tensor randn zeros ones randint arange range one_hot softmax log_softmax "
    "cross_entropy sum mean max view reshape T t transpose shape size float backward values "
    "indices torch F keepdim dim seed generator Generator manual_seed "
    "print import True None cat var std 0 1 2 3 -1 2.5 1e308 0.0 + - * / ** @ ( ) [ ] : , . = ; \n"
).split(" ") + list(FUNCTIONS)
SERVER = Limits(100_000, 20_000, 200)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(WORDS), min_size=1, max_size=25))
def test_any_program_is_a_reply_or_a_program_error(words: list[str]) -> None:
    source = PREFIX + "L = " + " ".join(words)
    try:
        trace = trace_tensors(source, limits=SERVER)
    except engine.ProgramError as error:
        assert error.line is not None or error.type in ("BadValue",)
        return
    assert isinstance(tensor_reply(trace)["nodes"], list)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet="AXYv()[],.=@+-*/ 0123\n", max_size=40))
def test_any_text_is_a_reply_or_a_program_error(text: str) -> None:
    try:
        trace_tensors(PREFIX + text, limits=SERVER)
    except engine.ProgramError:
        pass


DEEP = [
    "L = (" + " + ".join(["A"] * 5000) + ").sum()",
    "L = A" + ".t()" * 5000 + ".sum()",
    "L = " + "-" * 5000 + "A.sum()",
    "L = " + "(" * 5000 + "A.sum()" + ")" * 5000,
    "L = tensor(" + "[" * 5000 + "1.0" + "]" * 5000 + ").sum()",
]


def test_deep_programs_are_refused_with_the_nesting_limit() -> None:
    for tail in DEEP:
        try:
            trace_tensors(PREFIX + tail, limits=SERVER)
        except engine.LimitExceeded as error:
            assert error.line == 7 and "200" in str(error)
        else:
            raise AssertionError(tail[:40])


def test_sizes_and_dims_of_any_kind_are_refused_not_crashed() -> None:
    tails = [
        "L = zeros(size=None)", "L = randn(size=C)", "L = randint(0, 2, -1)",
        "L = torch.randn().t()", "L = X.size(2)", "L = zeros(0)", "L = A.sum().t()",
    ]  # fmt: skip
    for tail in tails:
        try:
            trace_tensors(PREFIX + tail, limits=SERVER)
        except engine.ProgramError as error:
            assert error.line == 7, tail
