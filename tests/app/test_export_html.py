"""POST /api/export?format=html and app/export/onefile.py: one self-contained file, the page's own
trace,
a CSP that admits exactly its inline script and style, nothing from the program able to break
out of its data block. (tests/browser/test_onefile.py opens such files in Chromium.)"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from micrograd.engine import Value
from onefile_traces import block_json, file_data

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "engine"))
import node_driver  # noqa: E402
from node_driver import NODE  # noqa: E402

import chainrule
from chainrule.app.export.onefile import (
    build_html,
    build_players_html,
    compact_trace,
    expanded_trace,
    packed_block,
)
from chainrule.app.http.pages import ui_catalogue
from chainrule.engine.narration import narrations
from chainrule.engine.ops import page_table

PROGRAM = {"source": "a = 2; b = -3; c = 10; e = a + b; f = e * c"}


class Document(HTMLParser):
    """The parts of a document that matter here: meta CSP, scripts and styles with their text,
    and every attribute that could load something."""

    def __init__(self) -> None:
        super().__init__()
        self.csp = None
        self.scripts: list[tuple[dict, str]] = []
        self.styles: list[str] = []
        self.urls: list[str] = []
        self._open: tuple[str, dict] | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "meta" and attributes.get("http-equiv") == "Content-Security-Policy":
            self.csp = attributes["content"]
        self.urls += [v for k, v in attrs if k in ("src", "href") and v]
        if tag in ("script", "style"):
            self._open, self._text = (tag, attributes), []

    def handle_data(self, data):
        if self._open:
            self._text.append(data)

    def handle_endtag(self, tag):
        if self._open and tag == self._open[0]:
            text = "".join(self._text)
            if tag == "script":
                self.scripts.append((self._open[1], text))
            else:
                self.styles.append(text)
            self._open = None


def parse(html: str) -> Document:
    document = Document()
    document.feed(html)
    return document


def script_types(document: Document) -> list[str | None]:
    return [attrs.get("type") for attrs, _ in document.scripts]


def sha256_source(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def directives(csp: str) -> dict[str, list[str]]:
    return {part.split()[0]: part.split()[1:] for part in csp.split(";") if part.strip()}


def test_the_export_is_an_html_download(client):
    response = client.post("/api/export?format=html", json=PROGRAM)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert response.headers["content-disposition"] == 'attachment; filename="program.html"'
    assert response.text.startswith("<!doctype html>")


def test_the_file_carries_the_trace_the_page_gets(client):
    html = client.post("/api/export?format=html", json=PROGRAM).text
    graph = client.post("/api/graph", json=PROGRAM).json()
    document = parse(html)
    blocks = {attrs.get("id"): text for attrs, text in document.scripts}
    data = file_data(html)
    for trace in (data["trace"], graph):
        trace["layout"].pop("cached")
    assert data["trace"] == graph
    assert json.loads(blocks["chainrule-ops"]) == page_table()
    assert json.loads(blocks["chainrule-ui"]) == ui_catalogue("en")


def test_the_file_speaks_the_requests_language(client):
    html = client.post("/api/export?format=html&lang=et", json=PROGRAM).text
    document = parse(html)
    blocks = {attrs.get("id"): text for attrs, text in document.scripts}
    assert '<html lang="et">' in html
    assert json.loads(blocks["chainrule-ui"]) == ui_catalogue("et")
    trace = file_data(html)["trace"]
    english = client.post("/api/graph", json=PROGRAM).json()
    assert narrations(trace)[-1] != narrations(english)[-1]
    assert (
        narrations(trace)[-1]
        == narrations(client.post("/api/graph?lang=et", json=PROGRAM).json())[-1]
    )


def test_the_csp_admits_exactly_the_inline_script_and_style(client):
    document = parse(client.post("/api/export?format=html", json=PROGRAM).text)
    policy = directives(document.csp)
    assert policy["default-src"] == ["'none'"]
    modules = [text for attrs, text in document.scripts if attrs.get("type") == "module"]
    assert len(modules) == 1 and len(document.styles) == 1
    assert policy["script-src"] == [sha256_source(modules[0])]
    assert policy["style-src"] == [sha256_source(document.styles[0])]
    assert policy["img-src"] == ["data:"]
    # The trace packed, the ops and the words as JSON, the player.
    assert script_types(document) == ["application/zlib+base64"] + ["application/json"] * 2 + [
        "module"
    ]
    # Nothing to fetch: the one URL is the icon, inline.
    assert all(url.startswith("data:image/svg+xml,") for url in document.urls) and document.urls


def test_the_title_is_the_query_s_or_the_program_on_one_line(client):
    title = "Lecture%203%3A%20%3Cb%3Ebackprop%3C%2Fb%3E"  # Lecture 3: <b>backprop</b>
    given = client.post(f"/api/export?format=html&title={title}", json=PROGRAM).text
    assert "<title>Lecture 3: &lt;b&gt;backprop&lt;/b&gt;</title>" in given
    assert '"title":"Lecture 3: \\u003cb>backprop\\u003c/b>"' in block_json(given)
    default = client.post("/api/export?format=html", json={"source": "a = 2\nb = a *  3\n"}).text
    assert "<title>a = 2 b = a * 3</title>" in default
    long = client.post("/api/export?format=html", json={"source": " + ".join(["x"] * 40)}).text
    assert re.search(r"<title>x \+ x[^<]{40,}\u2026</title>", long)


def test_a_title_over_the_limit_is_422(client):
    response = client.post("/api/export?format=html&title=" + "t" * 201, json=PROGRAM)
    assert response.status_code == 422
    assert response.json()["error"]["type"] == "InvalidRequest"


def test_nothing_in_the_program_breaks_out_of_the_data_block(client):
    source = "# </script><script>alert(1)</script><!--\na = Value(2, label='</script>')\nb = a * a"
    html = client.post("/api/export?format=html&title=%3C/script%3E", json={"source": source}).text
    document = parse(html)
    # The trace's block is base64 (nothing in it can end it); the ops and words are JSON.
    assert script_types(document)[1:] == ["application/json"] * 2 + ["module"]
    assert re.fullmatch(r"[A-Za-z0-9+/]*={0,2}", document.scripts[0][1])
    data = file_data(html)
    assert data["trace"]["source"] == source and data["title"] == "</script>"
    assert html.count("</script>") == 4


def test_a_program_error_is_400_and_a_graph_over_the_export_limit_too(make_client):
    client = make_client(export_max_nodes=4)
    response = client.post("/api/export?format=html", json={"source": "a +"})
    assert response.status_code == 400
    assert response.json()["error"]["type"] == "SyntaxError"
    response = client.post("/api/export?format=html", json=PROGRAM)
    assert response.status_code == 400
    assert response.json()["error"] == {
        **response.json()["error"],
        "type": "ExportTooLarge",
        "message": "graph too large to export (5 nodes; limit 4)",
    }


def test_html_needs_no_graphviz(make_client):
    client = make_client()
    client.app.state.server.dot_binary = None
    assert client.post("/api/export?format=svg", json=PROGRAM).status_code == 503
    assert client.post("/api/export?format=html", json=PROGRAM).status_code == 200


def test_several_players_share_one_op_table_and_one_script(client):
    trace = client.post("/api/graph", json=PROGRAM).json()
    html = build_players_html([("one", trace), ("two", trace)], title="two")
    document = parse(html)
    hosts = re.findall(r'<div class="chainrule-player" data-chainrule-data="([^"]+)"></div>', html)
    assert hosts == ["chainrule-data-0", "chainrule-data-1"]
    assert len([1 for attrs, _ in document.scripts if attrs.get("type") == "module"]) == 1
    assert '<body class="single">' in build_html(trace, title="one")
    assert "<body>" in html


def test_non_finite_numbers_stay_the_api_s_strings(client):
    trace = client.post("/api/graph", json={"source": "a = 0\nb = log(a)"}).json()
    html = build_html(trace, title="log 0")
    assert '"data":"-Infinity"' in block_json(html)
    with pytest.raises(ValueError):
        build_html({**trace, "root_data": float("nan")}, title="a float nan is no JSON")


# The page's reader of the file's trace (static/js/io/onefile-trace.js), under Node: each case's
# trace as the file holds it, written back, and the order of its keys (the reply's, and its
# edges' and program's).
EXPAND = """
import { expandTrace } from "./io/onefile-trace.js";
import { readFileSync } from "node:fs";
const cases = JSON.parse(readFileSync(process.argv[2], "utf8"));
const keys = (reply) => [Object.keys(reply), Object.keys(reply.edges[0] ?? {}),
  Object.keys(reply.program ?? {})];
console.log(JSON.stringify(cases.map((trace) => [expandTrace(trace), keys(expandTrace(trace))])));
"""


def keys(reply: dict) -> list[list[str]]:
    return [
        list(reply),
        list(reply["edges"][0] if reply["edges"] else {}),
        list(reply.get("program") or {}),
    ]


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed (make test-deps)")
def test_the_page_writes_back_exactly_the_trace_the_file_left_out(client, tmp_path):
    bodies = [
        PROGRAM,
        {"source": "a = 0\nb = log(a)\nc = a / 0 + b ** 2 - exp(1000)"},  # non-finite, derived
        {"source": "a = 3\nb = a * a + 1", "mode": "overwrite"},  # correct_grad differs
        {"source": "a = 2\nb = -3\nc = 10\nf = (a + b) * c", "pass": "forward", "wrt": "a"},
        {"source": "from micrograd.engine import Value\na = Value(2.0, label='a')\nb = a * a"},
    ]
    replies = [client.post("/api/graph", json=body).json() for body in bodies]
    a = Value(2.0)
    replies.append(chainrule.trace_value((a * a + 1).relu()))  # its program holds its source
    # A trace whose edges are not in their targets' input order is carried as it is.
    shuffled = dict(replies[0], edges=replies[0]["edges"][::-1])
    held = [compact_trace(reply) for reply in [*replies, shuffled]]
    assert all(trace["onefile"]["edges"] == "local_grad" for trace in held[:-1])
    assert held[-2]["onefile"]["program_source"] == 0 and "source" not in held[-2]["program"]
    assert held[-1]["edges"] == shuffled["edges"] and "edges" not in held[-1].get("onefile", {})
    expanded = node_driver.run_node(tmp_path, held, EXPAND)
    assert [trace for trace, _ in expanded] == [*replies, shuffled]
    assert [order for _, order in expanded] == [keys(reply) for reply in [*replies, shuffled]]
    assert [expanded_trace(trace) for trace in held] == [*replies, shuffled]  # the kernel's reader


def test_a_big_graph_s_file_is_smaller_than_its_reply(client):
    """What the file leaves out is most of a big graph's edges (the demo: 55 MB to 44 MB of
    JSON), and the block packs that JSON (the demo: 43 MB to 5.8 MB of base64)."""
    terms = " + ".join(f"w{i}*x{i}" for i in range(300))
    reply = client.post("/api/graph", json={"source": f"y = tanh({terms})"}).json()
    html = build_html(reply, title="big")
    assert file_data(html)["trace"] == reply
    packed = block_json(html)  # the JSON the player's data block packs
    size = {key: len(json.dumps(reply[key], separators=(",", ":"))) for key in ("edges",)}
    assert len(packed) < len(json.dumps(reply, separators=(",", ":"))) - size["edges"] / 2
    block = parse(html).scripts[0][1]
    assert len(block) < len(packed) / 4
    assert compact_trace({"kind": "tensor", "nodes": [], "edges": []})["edges"] == []


# The page's reader of a packed data block (static/js/io/packed-json.js), under Node, which has
# no Uint8Array.fromBase64: its atob path, which a browser without fromBase64 takes (Chromium
# takes the other: tests/browser/test_onefile.py).
UNPACK = """
import { bytesOfBase64, inflatedJson } from "./io/packed-json.js";
import { readFileSync } from "node:fs";
const blocks = JSON.parse(readFileSync(process.argv[2], "utf8"));
const values = [];
for (const block of blocks) values.push(await inflatedJson(bytesOfBase64(block)));
console.log(JSON.stringify([typeof Uint8Array.fromBase64, values]));
"""


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed (make test-deps)")
def test_the_page_unpacks_each_block_to_the_json_it_packs(client, tmp_path):
    reply = client.post("/api/graph", json={"source": "a = Value(2.0, label='é ∂ 😀 </script>')"})
    values = [
        {"title": "ünïcode ∂L/∂a 😀", "trace": reply.json()},
        {"numbers": [0.1, -0.0, 1e308, "NaN", "-Infinity"], "empty": "", "nested": [[[]]]},
        [],
    ]
    blocks = [packed_block(value) for value in values]
    assert all(re.fullmatch(r"[A-Za-z0-9+/]*={0,2}", block) for block in blocks)
    fallback, unpacked = node_driver.run_node(tmp_path, blocks, UNPACK)
    assert fallback == "undefined"  # the atob path ran
    assert unpacked == node_driver.negative_zeros(json.loads(json.dumps(values)))
