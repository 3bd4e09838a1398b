"""A reply stays proportional to its graph and within the byte budget of
docs/api.md ("Reply size"), whatever the names: narration refers to nodes by index, so a long
name is sent in its node's fields and not in every step that speaks of it. Sizes only: no timing
here (bench/engine.py measures the time)."""

from __future__ import annotations

import pytest

from chainrule.engine.narration import narrations
from chainrule.engine.reply import REPLY_BYTES_PER_NODE, REPLY_BYTES_PER_SOURCE_CHAR
from chainrule.engine.step_reader import step_objects

LONG_NAME = "x" * 99_990  # issue 21: this name alone made a 2.9 MB reply


def budget(nodes: int, source: str) -> int:
    return REPLY_BYTES_PER_NODE * nodes + REPLY_BYTES_PER_SOURCE_CHAR * len(source)


PROGRAMS = {
    "a 20,000-node sum": " + ".join(f"x{i}" for i in range(10_000)),
    "a 7,499-node sum of products": " + ".join(f"a{i}*b{i}" for i in range(1_875)),
    "a 99,990-character name": f"{LONG_NAME} + 1",
}


@pytest.mark.parametrize("source", PROGRAMS.values(), ids=PROGRAMS.keys())
def test_a_big_reply_stays_within_the_byte_budget(client, source: str) -> None:
    response = client.post("/api/graph", json={"source": source})
    assert response.status_code == 200
    reply = response.json()
    nodes = len(reply["nodes"])
    assert len(response.content) <= budget(nodes, source), (len(response.content), nodes)


def test_a_long_name_is_sent_in_its_node_and_not_in_every_step(client) -> None:
    response = client.post("/api/graph", json={"source": f"{LONG_NAME} + 1"})
    reply = response.json()
    assert all(LONG_NAME not in step["template"] for step in step_objects(reply))
    # Its node's label, name and text, its leaf's name and label, its group's and its gradient
    # check's names, the source.
    assert response.text.count(LONG_NAME) == 8
    # Filled, narration names it in full, as it did when every step carried it.
    assert narrations(reply)[-1] == (
        f"Visit {LONG_NAME}: a leaf, nothing to pass on (grad[{LONG_NAME}] = 1)"
    )


def test_a_reply_over_its_budget_is_a_400_naming_it() -> None:
    """Issue 36: the budget is checked, not only documented (a backstop: every field is linear,
    tests/scenarios/test_work_bounds.py); below 1 MB a reply is never refused."""
    from chainrule.engine.errors import LimitExceeded
    from chainrule.engine.reply import REPLY_BYTES_FLOOR, check_reply_size

    check_reply_size(REPLY_BYTES_FLOOR, 5, "a * b")  # a few nodes of many definitions
    check_reply_size(budget(1_000, "a" * 10), 1_000, "a" * 10)
    with pytest.raises(LimitExceeded) as caught:
        check_reply_size(327_000_000, 4_001, "f" * 68_681, expanded=True)
    assert caught.value.message.render("en") == (
        "the reply would be 327,000,000 bytes, over its budget of 6,688,310 (1,500 bytes a node "
        "and 10 a character of the program): make the program smaller, or draw it without "
        "expanding derived operations (expand_derived: false)"
    )


def refused_over_a_tiny_budget(monkeypatch, make_reply) -> None:
    """`make_reply()` raises LimitExceeded once every reply's budget is 10 bytes a node."""
    from chainrule.engine import reply
    from chainrule.engine.errors import LimitExceeded

    monkeypatch.setattr(reply, "REPLY_BYTES_FLOOR", 0)
    monkeypatch.setattr(reply, "REPLY_BYTES_PER_NODE", 10)
    monkeypatch.setattr(reply, "REPLY_BYTES_PER_SOURCE_CHAR", 0)
    with pytest.raises(LimitExceeded) as caught:
        make_reply()
    assert caught.value.message.render("en").startswith("the reply would be ")


def test_a_reply_made_for_python_keeps_the_budget(monkeypatch) -> None:
    """`chainrule.trace` (the notebook's, whose reply a widget sends on) is bounded as the
    server's body is: the reply is no longer encoded to be decoded again, but still measured."""
    import chainrule

    refused_over_a_tiny_budget(monkeypatch, lambda: chainrule.trace("a = 2\nb = a * a + 1"))


def test_a_widget_encodes_its_reply_once_and_keeps_the_budget(monkeypatch) -> None:
    """The widget (chainrule.show in a kernel) sends the reply as zlib-compressed JSON: it is
    encoded once, for that (whole, or a field at a time: its nodes once), and its size checked on
    those bytes (an encoding for the check alone cost micrograd's demo 0.15-0.3 s); over its
    budget the show raises, as a trace does."""
    pytest.importorskip("anywidget")
    import orjson

    from chainrule.notebook import widget as notebook_widget

    encodings = []
    real = orjson.dumps

    def counted(value, *args):
        reply = isinstance(value, dict) and "steps" in value  # a reply, not a layout or a message
        nodes = isinstance(value, list) and bool(value) and isinstance(value[0], dict)
        if reply or (nodes and {"inputs", "grad"} <= value[0].keys()):  # or a reply's nodes
            encodings.append(1)
        return real(value, *args)

    monkeypatch.setattr(orjson, "dumps", counted)
    shown = notebook_widget.widget("a = 2\nb = a * a + 1")
    assert len(encodings) == 1 and shown.trace["nodes"][0]["grad"] == 4.0
    refused_over_a_tiny_budget(monkeypatch, lambda: notebook_widget.widget("a = 2\nb = a * a + 1"))
