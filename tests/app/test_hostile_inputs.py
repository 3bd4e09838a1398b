"""The hostile-input catalogue: what a public classroom tool receives, through real HTTP.

Every row states the exact status, error type and position (1-based line and column) a request
gets. Nothing here may produce a 500, a traceback, a hang or a crash of the worker.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import httpx
import pytest
from servers import strict_json

JSON = {"content-type": "application/json"}
MIB = 1 << 20

SUM_20K = "a = 1\ns = a" + " + a" * 19_999  # exactly 20,000 nodes: the limit
NESTED_200 = "(" * 200 + "a" + ")" * 200


def src(source: str) -> dict:
    return {"source": source}


# (case id, body (dict → JSON, bytes → raw), status, error type, line, column, message fragment)
REFUSED = [
    # Empty and whitespace-only programs.
    ("empty", src(""), 400, "SyntaxError", 1, 1, "the program is empty"),
    ("whitespace", src("   \n\t\n"), 400, "SyntaxError", 1, 1, "the program is empty"),
    ("only a comment", src("# a = 1"), 400, "SyntaxError", 1, 1, "the program is empty"),
    # Syntax errors at the start, middle and end, and on a later line.
    ("error at start", src("* a"), 400, "SyntaxError", 1, 1, "'*' needs a left-hand side"),
    ("error in middle", src("a + * b"), 400, "SyntaxError", 1, 5, "found '*'"),
    ("error at end", src("a +"), 400, "SyntaxError", 1, 4, "unexpected end of input"),
    ("second line", src("a = 1\nb = a $ 2"), 400, "SyntaxError", 2, 7, "unexpected character '$'"),
    ("unclosed paren", src("a = 1\nb = (a"), 400, "SyntaxError", 2, 5, "never closed"),
    ("third line, blank before", src("\n\na +"), 400, "SyntaxError", 3, 4, "end of input"),
    ("missing operator", src("a b"), 400, "SyntaxError", 1, 3, "missing operator"),
    ("digit then name", src("1a"), 400, "SyntaxError", 1, 1, "for a product write 1*a"),
    ("double assign sign", src("a = = 1"), 400, "SyntaxError", 1, 5, "found '='"),
    ("floor division", src("a // b"), 400, "SyntaxError", 1, 4, "found '/'"),
    ("modulo", src("a % b"), 400, "SyntaxError", 1, 3, "unexpected character '%'"),
    ("hex literal", src("0x10"), 400, "SyntaxError", 1, 1, "neither a number nor a name"),
    ("function not called", src("relu a"), 400, "SyntaxError", 1, 1, "call it as relu(x)"),
    # Program errors other than syntax.
    ("unknown function", src("foo(a)"), 400, "UnknownFunction", 1, 1, "unknown function 'foo'"),
    ("print", src("print(1)"), 400, "SyntaxError", 1, 1, "nothing to trace"),
    ("no argument", src("relu()"), 400, "ArgumentCount", 1, 1, "takes 1 argument, got 0"),
    ("two arguments", src("relu(a, b)"), 400, "ArgumentCount", 1, 1, "got 2"),
    ("assigned twice", src("a = 1\na = 2"), 400, "AssignedTwice", 2, 1, "assigned twice"),
    ("use before assign", src("b = c + 1\nc = 2"), 400, "UseBeforeAssign", 1, 5, "line 2"),
    # Python escapes: the program is data, never Python.
    ("__import__", src("__import__('os')"), 400, "SyntaxError", 1, 12, "strings are not part"),
    ("attribute", src("a.b"), 400, "SyntaxError", 1, 2, "'.b' is not part of the language"),
    ("dunder attribute", src("relu.__class__"), 400, "SyntaxError", 1, 5, "chainrule reads"),
    ("indexing", src("a[0]"), 400, "NeedsRunning", 1, 2, "a list or an index ('[ ]') must run"),
    ("string", src("'x'"), 400, "SyntaxError", 1, 1, "strings are not part"),
    ("f-string", src('f"x"'), 400, "SyntaxError", 1, 2, "strings are not part"),
    ("lambda", src("lambda: 1"), 400, "NeedsRunning", 1, 1, "a function ('lambda') must run"),
    ("import", src("import os"), 400, "SyntaxError", 1, 1, "nothing to trace"),
    ("def", src("def f(): 1"), 400, "NeedsRunning", 1, 1, "a function ('def') must run"),
    ("walrus", src("(a := 1)"), 400, "SyntaxError", 1, 4, "':=' is not part"),
    ("comprehension", src("[x for x in y]"), 400, "NeedsRunning", 1, 1, "[ ]"),
    ("conditional", src("a if b else c"), 400, "NeedsRunning", 1, 3, "a condition ('if')"),
    ("comparison", src("a == b"), 400, "SyntaxError", 1, 3, "comparisons are not part"),
    # Literals too large for a float are refused where they are written.
    ("1e309", src("1e309"), 400, "SyntaxError", 1, 1, "1e309 is too large"),
    ("1e309 as leaf", src("a = 1e309\na * 2"), 400, "SyntaxError", 1, 5, "too large"),
    ("5,000 digits", src("1" * 5_000), 400, "SyntaxError", 1, 1, "has 5,000 digits"),
    ("5,000 digits, line 2", src("a = 1\nb = " + "9" * 5_000), 400, "SyntaxError", 2, 5, "digits"),
    # Nesting beyond the limit (200): the error points at the first level too deep.
    ("201 parens", src("(" * 201 + "a" + ")" * 201), 400, "LimitExceeded", 1, 201,
     "more than 200 levels deep"),
    ("10,000 parens", src("(" * 10_000 + "a" + ")" * 10_000), 400, "LimitExceeded", 1, 201,
     "nesting"),
    ("201 calls", src("relu(" * 201 + "a" + ")" * 201), 400, "LimitExceeded", 1, 1005, "nesting"),
    ("unclosed 10,000", src("(" * 10_000), 400, "LimitExceeded", 1, 201, "nesting"),
    # Over-long programs and graphs: limit + 1. A program is bounded by its tokens (issue 42):
    # the caret is on the first token past the bound, a comment or a blank counts for nothing.
    ("100,001 tokens", src("a+" * 50_000 + "a"), 400, "LimitExceeded", 1, 100_001,
     "program has more than 100,000 tokens (names, numbers, strings, operators); the limit is "
     "100,000 and this token is past it"),
    ("100,001 tokens, line 3", src("# note\na = 1\nb = " + "a*" * 49_998 + "a + 1 + 2"), 400,
     "LimitExceeded", 3, 100_000, "more than 100,000 tokens"),
    ("100,001 with strings", src("a = 1" + "; a.label = 'a long label'" * 16_666 + ";\nb"), 400,
     "LimitExceeded", 2, 1, "more than 100,000 tokens"),
    ("20,001 nodes", src(SUM_20K + " + a"), 400, "LimitExceeded", 2, 5,
     "the graph needs more than 20,000 nodes; the limit is 20,000"),
    ("30,001 unary minus", src("-" * 30_000 + "a"), 400, "LimitExceeded", 1, 10_001,
     "the limit is 20,000"),
    # Characters that are not part of the language.
    ("NUL", src("a\x00b"), 400, "SyntaxError", 1, 2, "U+0000 (NUL)"),
    ("NUL on line 2", src("a\n\x00"), 400, "SyntaxError", 2, 1, "NUL"),
    ("lone surrogate", b'{"source": "a + \\ud800"}', 400, "SyntaxError", 1, 5, "lone surrogate"),
    ("fullwidth x", src("ｘ = 1"), 400, "SyntaxError", 1, 1, "FULLWIDTH LATIN SMALL LETTER X"),
    ("zero-width space", src("a\u200bb"), 400, "SyntaxError", 1, 2, "ZERO WIDTH SPACE"),
    ("quote in a name", src('a"b'), 400, "SyntaxError", 1, 2, "strings are not part"),
    ("DOT in a name", src("a -> b [label=x]"), 400, "SyntaxError", 1, 4, "comparisons are not"),
    ("HTML in a name", src("<script>"), 400, "SyntaxError", 1, 1, "comparisons are not"),
    # Bad values and visit orders: not about the source text, so no position.
    # A number no float holds and the NaN/Infinity tokens are malformed JSON bodies (422):
    # MALFORMED below has their exact messages.
    ("infinite value", b'{"source": "a", "values": {"a": 1e309}}', 422, "InvalidRequest", None,
     None, "the number in values.a (1e309) is too large for a float"),
    ("NaN value", b'{"source": "a", "values": {"a": NaN}}', 422, "InvalidRequest", None, None,
     "values.a is NaN, which is not valid JSON"),
    ("value 'Infinity'", {"source": "a", "values": {"a": "Infinity"}}, 422, "InvalidRequest",
     None, None, "values.a: Input should be a valid number"),
    ("value true", {"source": "a", "values": {"a": True}}, 422, "InvalidRequest", None, None,
     "values.a: Input should be a valid number"),
    ("unknown order id", {"source": "a", "order": ["n9"]}, 400, "BadOrder", None, None,
     "'n9', which is not a node id"),
    ("repeated order id", {"source": "a", "order": ["n0", "n0"]}, 400, "BadOrder", None, None,
     "n0 twice"),
    # Malformed requests: 422 with the field at fault.
    ("source is a number", {"source": 5}, 422, "InvalidRequest", None, None,
     "source: Input should be a valid string"),
    ("source is null", {"source": None}, 422, "InvalidRequest", None, None, "source:"),
    ("no source", {}, 422, "InvalidRequest", None, None, "source: Field required"),
    ("values is a list", {"source": "a", "values": []}, 422, "InvalidRequest", None, None,
     "values: Input should be a valid dictionary"),
    ("value is text", {"source": "a", "values": {"a": "x"}}, 422, "InvalidRequest", None, None,
     "values.a: Input should be a valid number"),
    ("surrogate value name", b'{"source": "a", "values": {"\\ud800": 1}}', 422,
     "InvalidRequest", None, None, "lone surrogate"),
    ("unknown field", {"source": "a", "extra": 1}, 422, "InvalidRequest", None, None,
     "extra: Extra inputs are not permitted"),
    ("unknown mode", {"source": "a", "mode": "fast"}, 422, "InvalidRequest", None, None,
     "mode: Input should be 'correct' or 'overwrite'"),
    ("body is a list", [], 422, "InvalidRequest", None, None, "must be a JSON object"),
    ("not JSON", b"a + b", 422, "InvalidRequest", None, None, "the request body is not valid JSON"),
    ("not UTF-8", b"\xff\xfe", 422, "InvalidRequest", None, None, "not valid JSON"),
    ("invalid UTF-8 byte", b'{"source": "a\x80"}', 422, "InvalidRequest", None, None,
     "it is not UTF-8 text (invalid start byte at byte 13)"),
    ("empty body", b"", 422, "InvalidRequest", None, None, "the request body is empty"),
    # Bodies over 1 MiB: 413 before any parsing (this one is not even JSON).
    ("1 MiB + 1 of junk", b"x" * (MIB + 1), 413, "BodyTooLarge", None, None,
     "request body is 1,048,577 bytes; the limit is 1,048,576"),
    ("1 MiB source", b'{"source": "' + b"a" * MIB + b'"}', 413, "BodyTooLarge", None, None,
     "the limit is 1,048,576"),
    # Still sending when the server answers: the 413 must arrive, not a connection reset.
    ("8 MiB of junk", b"x" * (8 * MIB), 413, "BodyTooLarge", None, None,
     "request body is 8,388,608 bytes"),
]  # fmt: skip


# (case id, source, root data, warnings of all nodes (on the node that made the value non-finite),
#  {node label or text: (data, grad)} for nodes worth checking)
NUMERIC_EDGES = [
    ("log(0)", "log(0)", "-Infinity", ["division_by_zero"], {"0": (0.0, "Infinity")}),
    ("log(-1)", "log(-1)", "NaN", ["domain"], {"-1": (-1.0, -1.0)}),
    ("1/0", "1/0", "Infinity", ["division_by_zero"], {"0": (0.0, "-Infinity")}),
    ("0**-1", "0**-1", "Infinity", ["division_by_zero"], {"0": (0.0, "-Infinity")}),
    ("exp(1000)", "exp(1000)", "Infinity", ["overflow"], {"1000": (1000.0, "Infinity")}),
    ("exp(-1000)", "exp(-1000)", 0.0, [], {"-1000": (-1000.0, 0.0)}),
    ("relu(0)", "relu(0)", 0.0, [], {"0": (0.0, 0.0)}),
    ("relu at a leaf 0", "a = 0\nrelu(a)", 0.0, [], {"a": (0.0, 0.0)}),
    ("0*log(0)", "0*log(0)", "NaN", ["division_by_zero"], {"log(0)": ("-Infinity", 0.0)}),
    ("(-8)**(1/3)", "(-8)**(1/3)", "NaN", ["domain"], {"-8": (-8.0, "NaN")}),
    ("leaf -8 ** (1/3)", "a = -8\na**(1/3)", "NaN", ["domain"], {"a": (-8.0, "NaN")}),
    ("0**0.5", "0**0.5", 0.0, [], {"0": (0.0, "Infinity")}),
    ("9**9**9", "9**9**9", "Infinity", ["overflow"], {}),
    ("2**4000000", "2**4000000", "Infinity", ["overflow"], {}),
    ("overflowing product", "a = 1e308\na*10", "Infinity", ["overflow"], {"a": (1e308, 10.0)}),
    ("0/0", "a = 0\na/a", "NaN", ["division_by_zero"], {"a": (0.0, "NaN")}),
    ("tanh(1000)", "tanh(1000)", 1.0, [], {"1000": (1000.0, 0.0)}),
    ("sigmoid(-1000)", "sigmoid(-1000)", 0.0, [], {"-1000": (-1000.0, 0.0)}),
    ("negative base, variable exponent", "a = -2\nb = 0.5\na**b", "NaN", ["domain"],
     {"a": (-2.0, "NaN"), "b": (0.5, "NaN")}),
    ("precedence: -2**2", "-2**2", -4.0, [], {}),
    ("** is right-associative", "2**3**2", 512.0, [], {}),
    ("^ is **", "2 ^ 3", 8.0, [], {}),
]  # fmt: skip


# Accepted programs at or near the limits: (case id, source, node count, root data)
AT_THE_LIMITS = [
    ("200 parens", NESTED_200, 1, 1.0),
    ("201 unary minus", "-" * 201 + "a", 202, -1.0),
    ("10,000 unary minus", "-" * 10_000 + "a", 10_001, 1.0),
    ("201 ** chain", "a" + "**a" * 201, 202, 1.0),
    ("5,000 ** chain", "a" + "**a" * 5_000, 5_001, 1.0),
    ("100,000 characters", "a" * 100_000, 1, 1.0),
    # A name is one token whatever its length: a request's body (1 MiB) bounds its characters,
    # and its reply's budget counts them (engine/reply.py: a leaf's name is sent eight times).
    ("a name of 1,000,000 characters", "a" * 1_000_000, 1, 1.0),
    ("100,000 tokens", "a = 1" + "; a.label = 'a long label'" * 16_666 + ";", 1, 1.0),
    ("20,000 nodes", SUM_20K, 20_000, 20_000.0),
]


@pytest.fixture(scope="module")
def api(live_server: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live_server, timeout=60) as client:
        yield client


def post(api: httpx.Client, body: dict | list | bytes, path: str = "/api/graph") -> httpx.Response:
    if isinstance(body, bytes):
        return api.post(path, content=body, headers=JSON)
    return api.post(path, json=body)


def strict(response: httpx.Response) -> dict:
    return strict_json(response.content)


def number(value: float | str) -> float:
    return float(value.replace("Infinity", "inf")) if isinstance(value, str) else value


@pytest.mark.parametrize(
    "body, status, type_, line, column, fragment",
    [case[1:] for case in REFUSED],
    ids=[case[0] for case in REFUSED],
)
def test_hostile_request_is_refused_exactly(api, body, status, type_, line, column, fragment):
    response = post(api, body)
    assert response.status_code == status, response.text[:300]
    error = strict(response)["error"]
    assert error["type"] == type_
    assert (error["line"], error["column"]) == (line, column)
    assert fragment in error["message"]
    assert "Traceback" not in error["message"]
    if line is None:
        assert error["snippet"] == error["caret"] == ""
    else:  # the caret sits under the offending text
        assert error["caret"].lstrip(" \t").startswith("^")
        indent = len(error["caret"]) - len(error["caret"].lstrip(" \t"))
        if error["snippet"].startswith("…"):  # a window of a long line, cut on the left
            written = body["source"].split("\n")[line - 1]
            assert error["snippet"][indent] == written[column - 1]
        else:
            assert indent == column - 1


EXAMPLE = '{"source": "a * b"}'
FLOAT_TOO_LARGE = "is too large for a float (at most about 1.8e308)"

# Malformed bodies (PRODUCT §4: 422, never 400 "There was an error parsing the body" or a 500):
# (case id, raw body, Content-Type or None, the exact message).
MALFORMED = [
    ("nested 100,000 deep", b'{"source": "a", "values": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
     "application/json",
     "the request body is nested too deeply (100,001 levels of [ and {): a request is an object "
     f"with at most one level inside, such as {EXAMPLE}"),
    ("objects nested 100,000 deep", b'{"a": ' * 100_000 + b"1" + b"}" * 100_000,
     "application/json",
     "the request body is nested too deeply (100,000 levels of [ and {): a request is an object "
     f"with at most one level inside, such as {EXAMPLE}"),
    ("brackets in strings do not count", b'{"source": "[[[' + b"[" * 5000 + b'", "values": '
     + b"[" * 100_000 + b"]" * 100_000 + b"}", "application/json",
     "the request body is nested too deeply (100,001 levels of [ and {): a request is an object "
     f"with at most one level inside, such as {EXAMPLE}"),
    # 800 KB of escaped quotes after 1,100 brackets: finding the depth stays linear (a regex for
    # whole strings retried from every quote: minutes).
    ("escaped quotes after deep nesting",
     b'{"source": "a", "values": ' + b"[" * 1_100 + b'"' + b'\\"' * 400_000, "application/json",
     "the request body is nested too deeply (1,101 levels of [ and {): a request is an object "
     f"with at most one level inside, such as {EXAMPLE}"),
    ("5,000-digit number", b'{"source": "a", "values": {"a": ' + b"9" * 5_000 + b"}}",
     "application/json",
     f"the number in values.a has 5,000 digits: it {FLOAT_TOO_LARGE}"),
    ("401-digit number", b'{"source": "a", "values": {"a": -1' + b"0" * 400 + b"}}",
     "application/json",
     f"the number in values.a has 401 digits: it {FLOAT_TOO_LARGE}"),
    ("1e999", b'{"source": "a", "values": {"a": 1e999}}', "application/json",
     f"the number in values.a (1e999) {FLOAT_TOO_LARGE}"),
    ("-1e999 in the second value", b'{"source": "a", "values": {"b": 1, "a": -1e999}}',
     "application/json", f"the number in values.a (-1e999) {FLOAT_TOO_LARGE}"),
    ("a long float", b'{"source": "a", "values": {"a": ' + b"9" * 400 + b'.5}}',
     "application/json", f"the number in values.a (a number of 401 digits) {FLOAT_TOO_LARGE}"),
    ("a 5,000-digit source", b'{"source": ' + b"1" * 5_000 + b"}", "application/json",
     f"the number in source has 5,000 digits: it {FLOAT_TOO_LARGE}"),
    ("a huge number in order", b'{"source": "a", "order": ["n0", 1e400]}', "application/json",
     f"the number in order.1 (1e400) {FLOAT_TOO_LARGE}"),
    ("NaN literal", b'{"source": "a", "values": {"a": NaN}}', "application/json",
     "values.a is NaN, which is not valid JSON (JSON numbers are finite): send a finite number"),
    ("-Infinity literal", b'{"source": "a", "values": {"a": -Infinity}}', "application/json",
     "values.a is -Infinity, which is not valid JSON (JSON numbers are finite): send a finite "
     "number"),
    ("not JSON", b'{"source": ', "application/json",
     "the request body is not valid JSON: Expecting value (line 1, column 12)"),
    ("not JSON, line 2", b'{"source": "a",\n "values": {a}}', "application/json",
     "the request body is not valid JSON: Expecting property name enclosed in double quotes "
     "(line 2, column 13)"),
    ("non-UTF-8", b'{"source": "a\xff"}', "application/json",
     "the request body is not valid JSON: it is not UTF-8 text (invalid start byte at byte 13)"),
    ("empty", b"", "application/json",
     f"the request body is empty: send a JSON object such as {EXAMPLE}"),
    ("only whitespace", b" \n\t", "application/json",
     f"the request body is empty: send a JSON object such as {EXAMPLE}"),
    ("empty, no Content-Type", b"", None,
     f"the request body is empty: send a JSON object such as {EXAMPLE}"),
    ("an array", b'[{"source": "a"}]', "application/json",
     f"the request body must be a JSON object such as {EXAMPLE}, not an array"),
    ("a string", b'"a * b"', "application/json",
     f"the request body must be a JSON object such as {EXAMPLE}, not a string"),
    ("a number", b"3", "application/json",
     f"the request body must be a JSON object such as {EXAMPLE}, not a number"),
    ("null", b"null", "application/json",
     f"the request body must be a JSON object such as {EXAMPLE}, not null"),
    ("text/plain", b'{"source": "a"}', "text/plain",
     "the request body must be JSON sent with Content-Type: application/json (got Content-Type "
     "text/plain)"),
    ("form-encoded", b"source=a", "application/x-www-form-urlencoded",
     "the request body must be JSON sent with Content-Type: application/json (got Content-Type "
     "application/x-www-form-urlencoded)"),
    ("no Content-Type", b'{"source": "a"}', None,
     "the request body must be JSON sent with Content-Type: application/json (got no "
     "Content-Type)"),
]  # fmt: skip


@pytest.mark.parametrize("path", ["/api/graph", "/api/export?format=dot"])
@pytest.mark.parametrize(
    "body, content_type, message",
    [case[1:] for case in MALFORMED],
    ids=[case[0] for case in MALFORMED],
)
def test_a_malformed_body_is_422_saying_what_is_wrong(api, path, body, content_type, message):
    headers = {"content-type": content_type} if content_type else {}
    response = api.post(path, content=body, headers=headers)
    assert response.status_code == 422, response.text[:300]
    assert response.headers["content-type"] == "application/json"
    assert strict(response) == {
        "error": {
            "type": "InvalidRequest",
            "message": message,
            "line": None,
            "column": None,
            "end_line": None,
            "end_column": None,
            "snippet": "",
            "caret": "",
        }
    }


@pytest.mark.parametrize(
    "content_type",
    ["application/json; charset=utf-8", "Application/JSON", "application/vnd.api+json"],
)
def test_json_content_types_with_parameters_or_suffixes_are_read(api, content_type):
    headers = {"content-type": content_type}
    response = api.post("/api/graph", content=b'{"source": "a"}', headers=headers)
    assert response.status_code == 200, response.text[:300]


def test_a_number_a_float_holds_is_accepted_however_it_is_written(api):
    body = b'{"source": "a", "values": {"a": 1' + b"0" * 300 + b"}}"
    assert strict(post(api, body))["leaves"][0]["value"] == 1e300
    body = b'{"source": "a", "values": {"a": 0.' + b"1" * 5_000 + b"}}"
    assert strict(post(api, body))["leaves"][0]["value"] == 0.1111111111111111


def test_catalogue_is_large_enough():
    assert len(REFUSED) + len(NUMERIC_EDGES) + len(AT_THE_LIMITS) >= 40


@pytest.mark.parametrize(
    "source, root_data, warnings, nodes",
    [case[1:] for case in NUMERIC_EDGES],
    ids=[case[0] for case in NUMERIC_EDGES],
)
def test_numeric_edge_follows_ieee_with_a_warning(api, source, root_data, warnings, nodes):
    response = post(api, src(source))
    assert response.status_code == 200, response.text[:300]
    body = strict(response)
    by_id = {node["id"]: node for node in body["nodes"]}
    root = by_id[body["root"]]
    assert root["data"] == root_data
    warned = [w["type"] for node in body["nodes"] for w in node["warnings"]]
    assert warned == warnings
    for node in body["nodes"]:
        name = node["label"] or node["text"]
        if name in nodes:
            assert (node["data"], node["grad"]) == nodes[name], name


@pytest.mark.parametrize(
    "source, node_count, root_data",
    [case[1:] for case in AT_THE_LIMITS],
    ids=[case[0] for case in AT_THE_LIMITS],
)
def test_program_at_the_limit_is_traced(api, source, node_count, root_data):
    response = post(api, src(source))
    assert response.status_code == 200, response.text[:300]
    body = strict(response)
    assert len(body["nodes"]) == node_count
    root = next(node for node in body["nodes"] if node["id"] == body["root"])
    assert math.isclose(number(root["data"]), root_data)
    assert body["source"] == source


def test_a_script_tag_in_a_comment_comes_back_unharmed_and_is_never_drawn(api):
    source = 'a = 1  # <script>alert(1)</script>\nb = a * 2  # "]; x -> y; <b>\n'
    body = strict(post(api, src(source)))
    assert body["source"] == source
    assert [node["label"] for node in body["nodes"] if node["label"]] == ["a", "2", "b"]
    for format_ in ("svg", "dot"):
        exported = post(api, src(source), f"/api/export?format={format_}")
        assert exported.status_code == 200
        assert b"<script" not in exported.content and b"x -> y" not in exported.content


def test_a_value_named_like_markup_is_reported_as_plain_text(api):
    body = strict(post(api, {"source": "a * 2", "values": {'<img src=x onerror="1">': 1}}))
    assert body["warnings"][0]["type"] == "unknown_value"
    assert '<img src=x onerror="1">' in body["warnings"][0]["message"]


def test_a_chunked_body_over_the_limit_is_413(api):
    def chunks() -> Iterator[bytes]:
        for _ in range(17):
            yield b"x" * (64 * 1024)

    response = api.post("/api/graph", content=chunks(), headers=JSON)
    assert response.status_code == 413
    assert strict(response)["error"]["type"] == "BodyTooLarge"


def test_the_worker_survives_the_catalogue(api):
    assert api.get("/healthz").status_code == 200
    assert post(api, src("a * b")).status_code == 200
