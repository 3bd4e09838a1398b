"""One self-contained HTML file that plays a recorded trace: the embeddable player's bundle
(static/embed/chainrule-embed.js, its CSS inside) and the trace inlined (packed: `packed_block`),
nothing fetched, a Content-Security-Policy that allows exactly the inline script and style it
carries (by hash), so it opens from `file://`, a course page, an LMS or an e-mail. Its sliders
are live without the engine: the page computes the numbers (static/js/evaluator.js, from the op
table). Its words are one language's: the player's (the catalogue's `ui.*`, engine/i18n.py
ui_catalogue) and the trace's, which was traced in it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import zlib
from functools import cache
from html import escape
from typing import Any
from urllib.parse import quote

from chainrule.app.build.bundle import BUNDLE_JS, STATIC_DIR
from chainrule.app.export.drawing import UNSAFE_TEXT
from chainrule.engine.i18n import DEFAULT_LANG, check_lang, ui_catalogue
from chainrule.engine.ops import page_table

# The bundle is one ES module ending in `export{a as default,b as mountPlayer};`: inlined, its
# exports become the properties of one object that the boot code below calls.
_EXPORTS = re.compile(r"export\s*\{([^}]*)\};?\s*$")
# What would end an inline script early, or switch the HTML parser's script state.
_UNSAFE_IN_SCRIPT = re.compile(r"</script|<!--", re.IGNORECASE)

BOOT = """
for (const host of document.querySelectorAll("[data-chainrule-data]")) {
  const read = (id) => JSON.parse(document.getElementById(id).textContent);
  const block = document.getElementById(host.dataset.chainruleData).textContent;
  const { title, trace, graph } = await chainrule.unpackedBlock(block);
  const [ops, ui] = [read("chainrule-ops"), read("chainrule-ui")];
  chainrule.mountPlayer(host, { trace: chainrule.expandTrace(trace), ops, ui, title, graph });
}
"""
# A player's data block: its JSON (`json_block`) zlib-compressed at zlib's default level, as
# base64 text (`packed_block`). micrograd's demo: 43 MB of JSON, which Chromium's HTML parser
# read in 0.74 s of its 2.5 s to first paint, is a block of 5.8 MB (0.5 s to compress); the page
# has it parsed about 0.35 s sooner, inflating included (static/js/io/packed-json.js).
PACKED_TYPE = "application/zlib+base64"
PACK_LEVEL = 6

# The document around the players: the page's type scale and background, its title as the page's
# heading (read out, not shown: each player shows its own), one player filling the
# window (the graph, transport and narration on the first screen, under the player's head of about
# 3.1rem; the tables below it).
PAGE_STYLE = """
html { font-size: clamp(14px, 0.55vw + 8px, 32px); color-scheme: light dark; }
body { margin: 0; background: #f4f5f2; }
@media (prefers-color-scheme: dark) { body { background: #121417; } }
.chainrule-player ~ .chainrule-player { margin-top: 1.5rem; }
.page-title { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
body.single .chainrule-player {
  --chainrule-stage-height: calc(100svh - 3.3rem); --chainrule-height: auto;
}
""".strip()


@cache
def player_module() -> str:
    """The bundle as an inline module whose exports are the object `chainrule`, then BOOT."""
    bundle = BUNDLE_JS.read_text(encoding="utf-8")
    match = _EXPORTS.search(bundle)
    if match is None:
        raise ValueError(f"{BUNDLE_JS.name} does not end in an export clause: run make bundle")
    pairs = []
    for clause in match.group(1).split(","):
        local, _, exported = clause.strip().partition(" as ")
        pairs.append(f"{json.dumps(exported or local)}: {local}")
    module = f"{bundle[: match.start()]}const chainrule = {{{', '.join(pairs)}}};\n{BOOT}"
    if _UNSAFE_IN_SCRIPT.search(module):
        raise ValueError(f"{BUNDLE_JS.name} holds text that cannot be inlined in a <script>")
    return module


def json_block(value: Any) -> str:
    """`value` as the text of a JSON data block: `<` escaped, so nothing in it (a label, a
    program) can close the block (as app/http/pages.py does for the page's table of operations)."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return UNSAFE_TEXT.sub(_escaped, text.replace("<", "\\u003c"))


def packed_block(value: Any) -> str:
    """`value` as the text of a packed data block (PACKED_TYPE): `json_block`'s JSON, its UTF-8
    zlib-compressed, in base64 (letters, digits, `+`, `/`, `=`: nothing ends the block)."""
    packed = zlib.compress(json_block(value).encode("utf-8"), PACK_LEVEL)
    return base64.b64encode(packed).decode("ascii")


def _escaped(match: re.Match[str]) -> str:
    """A control or bidirectional override (UNSAFE_TEXT) as JSON writes it escaped: the file
    holds none of them raw, and the player reads the same strings."""
    return f"\\u{ord(match.group()):04x}"


def csp_hash(text: str) -> str:
    """A CSP source for an inline `<script>` or `<style>` whose content is exactly `text`."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def content_security_policy(script: str, style: str) -> str:
    """Nothing but the inline script and style (by hash) and data: images (the icon)."""
    return (
        f"default-src 'none'; script-src {csp_hash(script)}; style-src {csp_hash(style)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )


@cache
def _icon() -> str:
    svg = (STATIC_DIR / "favicon.svg").read_text(encoding="utf-8").strip()
    return "data:image/svg+xml," + quote(svg)


def build_players_html(
    players: list[tuple[str, dict[str, Any]]],
    *,
    title: str,
    lang: str = DEFAULT_LANG,
    graphs: dict[int, dict[str, Any]] | None = None,
) -> str:
    """A document with one player per `(title, trace)`, titled `title`, its words in `lang`
    (the traces' own words are the language they were traced in). `graphs`: by player, the
    scalar graph of a tensor program's trace (engine/tensor_graph.py), whose cells then
    recompute in the file."""
    script = player_module()
    ui = json_block(ui_catalogue(check_lang(lang)))
    hosts = []
    for i, (player_title, trace) in enumerate(players):
        data_id = f"chainrule-data-{i}"
        hosts.append(
            f'<div class="chainrule-player" data-chainrule-data="{data_id}"></div>\n'
            f'<script type="{PACKED_TYPE}" id="{data_id}">'
            f"{packed_block(_player_data(player_title, trace, (graphs or {}).get(i)))}</script>"
        )
    body_class = ' class="single"' if len(players) == 1 else ""
    shown_title = escape(UNSAFE_TEXT.sub(" ", title))  # no control or override reaches the page
    csp = escape(content_security_policy(script, PAGE_STYLE), quote=False)  # holds no `"`
    return f"""<!doctype html>
<html lang="{lang}">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="chainrule">
<title>{shown_title}</title>
<link rel="icon" href="{escape(_icon())}">
<style>{PAGE_STYLE}</style>
</head>
<body{body_class}>
<main>
<h1 class="page-title">{shown_title}</h1>
{chr(10).join(hosts)}
</main>
<script type="application/json" id="chainrule-ops">{json_block(page_table())}</script>
<script type="application/json" id="chainrule-ui">{ui}</script>
<script type="module">{script}</script>
</body>
</html>
"""


def _player_data(title: str, trace: dict[str, Any], graph: dict[str, Any] | None) -> dict:
    return {"title": title, "trace": compact_trace(trace)} | (
        {"graph": graph} if graph is not None else {}
    )


def _same(a: Any, b: Any) -> bool:
    """Whether JSON writes `a` and `b` alike (-0.0 is not 0.0, 1 is not 1.0 nor True)."""
    return type(a) is type(b) and a == b and repr(a) == repr(b)


def compact_trace(trace: dict[str, Any]) -> dict[str, Any]:
    """`trace` (a POST /api/graph reply) as the file holds it: without what the page writes back
    (static/js/io/onefile-trace.js `expandTrace`, which gives `trace` again, equal to the last
    bit): the edges but their local derivatives (edge k is the k-th input of the nodes in order:
    docs/api.md), and the program's source (the reply's own). micrograd's demo: 55 MB of JSON to
    44 MB, read and parsed before the first paint; writing the edges back costs less than reading
    them (a node's defaults would not: 65,818 nodes made again cost more than their 7 MB). A
    part that does not follow its rule, and a tensor program's trace, are left as they are."""
    if trace.get("kind") == "tensor" or not isinstance(trace.get("nodes"), list):
        return trace
    written = dict(trace)
    compact: dict[str, Any] = {}
    if _edges_follow_inputs(trace):
        written["edges"] = [edge["local_grad"] for edge in trace["edges"]]
        compact["edges"] = "local_grad"
    program = trace.get("program")
    if isinstance(program, dict) and _same(program.get("source"), trace.get("source")):
        written["program"] = {key: value for key, value in program.items() if key != "source"}
        compact["program_source"] = list(program).index("source")
    if not compact:
        return trace
    written["onefile"] = compact
    return written


def expanded_trace(held: dict[str, Any]) -> dict[str, Any]:
    """A trace as `compact_trace` holds it, with what it left out written back (the reply
    again, equal to the last bit): static/js/io/onefile-trace.js `expandTrace` in Python, for a
    kernel that keeps its widget's trace packed (notebook/widget.py). Any other trace as it
    is."""
    compact = held.get("onefile")
    if compact is None:
        return held
    reply = {key: value for key, value in held.items() if key != "onefile"}
    if compact.get("edges") == "local_grad":
        nodes = held["nodes"]
        inputs = [(node, j, source) for node in nodes for j, source in enumerate(node["inputs"])]
        reply["edges"] = [
            {"id": f"e{k}", "source": source, "target": node["id"], "index": j, "local_grad": local}
            for k, ((node, j, source), local) in enumerate(zip(inputs, held["edges"], strict=True))
        ]
    if "program_source" in compact:
        entries = list(held["program"].items())
        entries.insert(compact["program_source"], ("source", held["source"]))
        reply["program"] = dict(entries)
    return reply


def _edges_follow_inputs(trace: dict[str, Any]) -> bool:
    """Whether edge k is the k-th input of the nodes in order, and holds nothing else than its
    local derivative: `{id: e<k>, source: the input, target: the node, index: j, local_grad}`."""
    edges = trace.get("edges")
    inputs = [
        (node["id"], j, source)
        for node in trace["nodes"]
        for j, source in enumerate(node["inputs"])
    ]
    return (
        isinstance(edges, list)
        and len(edges) == len(inputs)
        and all(
            list(edge) == ["id", "source", "target", "index", "local_grad"]
            and (edge["id"], edge["source"], edge["target"], edge["index"])
            == (f"e{k}", source, target, j)
            for k, (edge, (target, j, source)) in enumerate(zip(edges, inputs, strict=True))
        )
    )


def build_html(
    trace: dict[str, Any],
    *,
    title: str,
    lang: str = DEFAULT_LANG,
    graph: dict[str, Any] | None = None,
) -> str:
    """One self-contained HTML document that plays `trace` (a POST /api/graph reply: nodes
    with their boxes, `layout`; or a tensor program's, with `graph` its scalar graph, so a
    cell's drag recomputes offline) with stepping, scrubbing, explanations and tables, its
    words in `lang` (trace it in the same language)."""
    graphs = {0: graph} if graph is not None else None
    return build_players_html([(title, trace)], title=title, lang=lang, graphs=graphs)
