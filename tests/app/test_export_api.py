"""POST /api/export and app/export/drawing.py: valid files in four formats, user text always
escaped."""

from __future__ import annotations

import json
import subprocess
import xml.etree.ElementTree as ET

import pytest
from onefile_traces import block_json

from chainrule.app.export.drawing import ExportLimits, draw_dot, record_field, render
from chainrule.app.layout.graphviz import Graphviz

SVG_TEXT = "{http://www.w3.org/2000/svg}text"
PROGRAM = {"source": "a = 2; b = -3; c = 10; e = a + b; f = e * c"}


@pytest.mark.parametrize(
    ("fmt", "media_type", "magic"),
    [
        ("svg", "image/svg+xml", b"<?xml"),
        ("png", "image/png", b"\x89PNG\r\n\x1a\n"),
        ("pdf", "application/pdf", b"%PDF"),
        ("dot", "text/vnd.graphviz; charset=utf-8", b"digraph chainrule {"),
    ],
)
def test_every_format_is_a_valid_download(client, fmt, media_type, magic):
    response = client.post(f"/api/export?format={fmt}", json=PROGRAM)
    assert response.status_code == 200
    assert response.headers["content-type"] == media_type
    disposition = f'attachment; filename="program.{fmt}"'
    assert response.headers["content-disposition"] == disposition
    assert response.content.startswith(magic)


@pytest.mark.parametrize("fmt", ["svg", "png", "pdf", "dot", "html"])
def test_the_file_is_named_by_its_slug_and_format(client, fmt):
    response = client.post(f"/api/export?format={fmt}&name=shared-variable", json=PROGRAM)
    assert response.status_code == 200
    disposition = f'attachment; filename="shared-variable.{fmt}"'
    assert response.headers["content-disposition"] == disposition


@pytest.mark.parametrize(
    "name",
    ['a"b', "../etc", "Neuron", "two words", "-lead", "trail-", "a--b", "a.svg", "", "x" * 61],
)
def test_a_name_that_is_not_a_slug_is_422(client, name):
    """A quote or a path would break the header or the file system: only a slug is taken."""
    response = client.post("/api/export", params={"format": "svg", "name": name}, json=PROGRAM)
    assert response.status_code == 422, name
    assert response.json()["error"]["message"].startswith("query.name: "), response.json()


def test_the_svg_is_micrograds_picture(client):
    svg = client.post("/api/export?format=svg", json=PROGRAM).content
    texts = [t.text for t in ET.fromstring(svg).iter(SVG_TEXT)]
    for expected in ("f", "data -10.0000", "grad 1.0000", "e", "grad 10.0000", "+", "*"):
        assert expected in texts


def test_svg_is_the_default_format(client):
    response = client.post("/api/export", json=PROGRAM)
    assert response.headers["content-type"] == "image/svg+xml"


def test_an_unknown_format_is_422(client):
    response = client.post("/api/export?format=gif", json=PROGRAM)
    assert response.status_code == 422
    assert response.json()["error"]["message"] == (
        "query.format: Input should be 'svg', 'png', 'pdf', 'dot' or 'html'"
    )


def test_a_program_error_is_400(client):
    response = client.post("/api/export?format=svg", json={"source": "a +"})
    assert response.status_code == 400
    assert response.json()["error"]["type"] == "SyntaxError"


def test_a_graph_over_the_export_limit_is_a_clear_400(make_client):
    client = make_client(export_max_nodes=10)
    source = " + ".join(f"x{i}" for i in range(6))
    response = client.post("/api/export?format=svg", json={"source": source})
    assert response.status_code == 400
    assert response.json()["error"] == {
        "type": "ExportTooLarge",
        "message": "graph too large to export (11 nodes; limit 10)",
        "line": None,
        "column": None,
        "end_line": None,
        "end_column": None,
        "snippet": "",
        "caret": "",
    }


def test_an_over_large_graph_is_refused_before_the_backward_pass_and_timeline(
    make_client, monkeypatch
):
    from chainrule import engine

    traced = []
    real_run = engine.run

    def spy(*args, **kwargs):
        traced.append(args)
        return real_run(*args, **kwargs)

    client = make_client(export_max_nodes=100)  # (its start-up traces the lessons)
    monkeypatch.setattr(engine, "run", spy)
    source = "c = 1\ns = c" + " + c" * 1_000  # 1,001 nodes
    response = client.post("/api/export?format=dot", json={"source": source})
    assert response.status_code == 400
    assert response.json()["error"]["message"] == (
        "graph too large to export (1,001 nodes; limit 100)"
    )
    assert traced == []  # refused as soon as the graph was built
    assert client.post("/api/export?format=dot", json={"source": "c = 1\nc * c"}).status_code == 200
    assert len(traced) == 1  # a graph within the limit is traced once


def test_without_graphviz_only_dot_is_drawn_and_the_rest_refused_before_tracing(
    make_client, monkeypatch
):
    from chainrule import engine

    client = make_client(dot_binary="/nonexistent/dot")
    assert client.app.state.server.dot_binary is None
    built = []
    real_build = engine.tracing.build

    def spy(*args, **kwargs):
        built.append(args)
        return real_build(*args, **kwargs)

    monkeypatch.setattr(engine.tracing, "build", spy)
    response = client.post("/api/export?format=svg", json=PROGRAM)
    assert response.status_code == 503
    assert response.json()["error"]["type"] == "GraphvizUnavailable"
    assert response.json()["error"]["message"] == (
        "Graphviz is not installed on the server, so only format=dot works"
    )
    assert built == []
    dot = client.post("/api/export?format=dot", json=PROGRAM)
    assert dot.status_code == 200 and dot.content.startswith(b"digraph chainrule {")
    assert len(built) == 1


def test_export_draws_the_requested_mode(client):
    # The overwrite bug: a*a keeps only one contribution, so grad a is 3, not 6.
    program = {"source": "a = 3; b = a * a", "mode": "overwrite"}
    texts = [
        t.text
        for t in ET.fromstring(client.post("/api/export", json=program).content).iter(SVG_TEXT)
    ]
    assert "grad 3.0000" in texts and "grad 6.0000" not in texts


def test_non_finite_values_are_drawn(client):
    response = client.post("/api/export?format=svg", json={"source": "log(0) + 1/0"})
    assert response.status_code == 200
    texts = [t.text for t in ET.fromstring(response.content).iter(SVG_TEXT)]
    assert "data -inf" in texts and "data inf" in texts


HOSTILE = '<script>alert("x")</script> {a|b} <p> \\l \\" } ]; n0 -> n1'


def trace_with_label(label: str) -> dict:
    return {
        "nodes": [
            {"id": "n0", "label": label, "text": label, "op": None, "data": 2.0, "grad": 1.0},
            {"id": "n1", "label": "", "text": "x", "op": "relu", "data": 2.0, "grad": 1.0},
        ],
        "edges": [{"id": "e0", "source": "n0", "target": "n1", "index": 0, "local_grad": 1.0}],
    }


def test_a_hostile_label_comes_out_as_exactly_that_text_in_svg():
    limits = ExportLimits(timeout_s=10)
    svg = render(trace_with_label(HOSTILE), "svg", graphviz=Graphviz("dot"), limits=limits)
    assert b"<script" not in svg and b"&lt;script&gt;" in svg
    texts = [t.text for t in ET.fromstring(svg).iter(SVG_TEXT)]
    assert HOSTILE in texts


def test_a_hostile_label_cannot_change_the_dot_structure():
    source = draw_dot(trace_with_label(HOSTILE)).source
    drawing = json.loads(
        subprocess.run(
            ["dot", "-Tjson"], input=source.encode(), capture_output=True, check=True
        ).stdout
    )
    assert sorted(obj["name"] for obj in drawing["objects"]) == ["n0", "n1", "n1_op"]
    assert len(drawing["edges"]) == 2
    n0 = next(obj for obj in drawing["objects"] if obj["name"] == "n0")
    assert n0["shape"] == "record"


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("a|b", "a\\|b"),
        ("{x}", "\\{x\\}"),
        ("<p>", "\\<p\\>"),
        ('say "hi"', 'say \\"hi\\"'),
        ("back\\slash", "back\\\\slash"),
        ("line\nbreak", "line break"),
    ],
)
def test_record_fields_escape_record_syntax(text, field):
    assert record_field(text) == field


def test_names_from_the_program_reach_the_svg_escaped(client):
    program = {"source": "script = 2; alert = script * 3; alert"}
    svg = client.post("/api/export?format=svg", json=program).content
    texts = [t.text for t in ET.fromstring(svg).iter(SVG_TEXT)]
    assert "script" in texts and "alert" in texts


def test_display_labels_reach_the_drawing_as_text(client):
    """A pasted cell's labels are the records' names (micrograd's draw_dot): Unicode as it is,
    record syntax and markup as text."""
    program = {"source": "a = Value(2.0, label='α')\nb = a * 3; b.label = '{x|y} <b>'\nb"}
    dot = client.post("/api/export?format=dot", json=program).text
    assert "{ α | data 2.0000 | grad 3.0000 }" in dot
    assert "{ \\{x\\|y\\} \\<b\\> | data 6.0000 | grad 1.0000 }" in dot
    svg = client.post("/api/export?format=svg", json=program).content
    texts = [t.text for t in ET.fromstring(svg).iter(SVG_TEXT)]
    assert "α" in texts and "{x|y} <b>" in texts


def test_a_forward_mode_export_draws_each_nodes_tangent_not_its_grad(client):
    # f = (a + b) * c: ∂f/∂a = c = 10, ∂e/∂a = 1, and b, c do not move with a.
    body = {**PROGRAM, "pass": "forward", "wrt": "a"}
    svg = client.post("/api/export?format=svg", json=body).content
    texts = [t.text for t in ET.fromstring(svg).iter(SVG_TEXT)]
    assert not [text for text in texts if text.startswith("grad ")]
    assert texts.count("\u2202/\u2202a 10.0000") == 1  # f
    assert texts.count("\u2202/\u2202a 1.0000") == 2  # a, e
    assert texts.count("\u2202/\u2202a 0.0000") == 2  # b, c


def test_a_forward_mode_export_without_its_leaf_is_the_graphs_own_400(client):
    graph = client.post("/api/graph", json={**PROGRAM, "pass": "forward"})
    export = client.post("/api/export?format=svg", json={**PROGRAM, "pass": "forward"})
    assert export.status_code == graph.status_code == 400
    assert export.json() == graph.json()


# Issue 36: what each control or override would do to a reader's screen, and that no export
# carries one (a drawing shows a space; the one-file HTML escapes it as JSON does).
UNSAFE = "\u202e\u0085\u2066\u202a\x1b\u2028"
UNSAFE_LABEL = "p" + "q".join(UNSAFE) + "r"


def test_bidi_overrides_and_controls_reach_no_export(client):
    program = {"source": f"a = Value(2.0, label='{UNSAFE_LABEL}')\nb = a * a"}
    for fmt in ("svg", "dot", "html"):
        response = client.post(f"/api/export?format={fmt}", json=program)
        assert response.status_code == 200, fmt
        text = response.content.decode()
        assert [char for char in UNSAFE if char in text] == [], fmt
    # PDF and PNG are drawn from the same DOT source as the SVG: it holds a space for each.
    assert record_field(UNSAFE_LABEL) == "p q q q q q r"
    packed = block_json(client.post("/api/export?format=html", json=program).text)
    assert "\\u202e" in packed and "\\u0085" in packed  # escaped: the player reads the same label
    assert [char for char in UNSAFE if char in packed] == []


def test_a_label_past_what_a_drawing_holds_is_a_400_that_says_so(client):
    """A 95,000-character name answered 503 ExportFailed ("try again later") for a program
    that never draws: Graphviz refuses records past 16 KiB."""
    program = {"source": "x" * 95_000 + " + 1"}
    for fmt in ("svg", "png", "pdf", "dot"):
        response = client.post(f"/api/export?format={fmt}", json=program)
        assert response.status_code == 400, fmt
        assert response.json()["error"]["type"] == "ExportTooLarge"
        assert response.json()["error"]["message"] == (
            "the label of n0 is 95,000 bytes of text: a drawing holds at most 16,000 in a node "
            "(Graphviz draws no longer record); shorten it, or export html, which draws no record"
        )
    assert client.post("/api/export?format=html", json=program).status_code == 200
    # Just under the bound, Graphviz draws it.
    assert client.post("/api/export?format=svg", json={"source": "x" * 15_900}).status_code == 200


def test_long_edges_go_to_the_fallback_before_dot_runs(monkeypatch):
    """`k*k*…*k` of 200 factors: 19,900 lanes, under export_max_lanes, but their squares are far
    past what dot's rows afford: 8 to 9 s of dot for a PDF. The fallback places the nodes up
    front: Graphviz only measures them (neato -n2) and draws them."""
    import chainrule.app.export.drawing as drawing
    from chainrule import engine
    from chainrule.app.api.export import export_trace
    from chainrule.app.api.schemas import GraphRequest
    from chainrule.app.settings import AppSettings

    runs: list[list[str]] = []
    real_run = drawing.run

    def recorded(graphviz, args, source, deadline):
        runs.append(args)
        return real_run(graphviz, args, source, deadline)

    monkeypatch.setattr(drawing, "run", recorded)
    source = "k = 1.0001\nL = " + "*".join(["k"] * 200)
    assert len(engine.build_graph(source).nodes) == 200
    trace = export_trace(GraphRequest(source=source), AppSettings())
    pdf = render(trace, "pdf", graphviz=Graphviz("dot"), limits=ExportLimits(timeout_s=30))
    assert pdf.startswith(b"%PDF")
    assert runs == [["-Kneato", "-n2", "-Tjson0"], ["-Kneato", "-n2", "-Tpdf"]]
