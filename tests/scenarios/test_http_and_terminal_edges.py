"""Small hardening of issue 21, item 6: HEAD answers as GET (monitors probe with HEAD), an error
repeats at most the start of what the client sent, booleans are strict, and `chainrule render`
never writes a control character of the program to the terminal."""

from __future__ import annotations

import subprocess
import sys

import pytest

from chainrule.app.cli import main


@pytest.mark.parametrize("path", ["/", "/healthz", "/api/presets", "/api/lessons", "/docs"])
def test_head_answers_as_get_without_the_body(client, path):
    get, head = client.get(path), client.head(path)
    assert get.status_code == head.status_code == 200
    assert head.content == b""
    for header in ("content-type", "content-length", "cache-control", "content-security-policy"):
        assert head.headers.get(header) == get.headers.get(header), header


def test_head_on_a_post_route_says_head_is_not_allowed(client):
    response = client.head("/api/graph")
    assert response.status_code == 405 and response.content == b""
    message = client.request("HEAD", "/api/graph", headers={"accept": "application/json"})
    assert message.headers["content-type"] == "application/json"


def test_a_405_names_the_method_that_was_sent(client):
    response = client.put("/healthz")
    assert response.json()["error"]["message"] == "method PUT is not allowed on /healthz"


def test_a_404_repeats_at_most_the_start_of_a_long_path(client):
    """Issue 21: a 404 echoed a 60 KB path in full."""
    response = client.get("/" + "a" * 60_000)
    assert response.status_code == 404
    assert response.json()["error"]["message"] == (
        "no such page or endpoint: GET /" + "a" * 38 + "…"
    )
    assert len(response.content) < 400


def test_an_unknown_field_with_a_long_name_is_cut_in_the_message(client):
    response = client.post("/api/graph", json={"source": "a", "b" * 60_000: 1})
    assert response.status_code == 422
    assert response.json()["error"]["message"] == ("b" * 39 + "…: Extra inputs are not permitted")
    assert len(response.content) < 400


@pytest.mark.parametrize("value", [0, 1, "true", "yes", "false", 1.0, None, [], {}])
def test_expand_derived_is_a_strict_boolean(client, value):
    """The schema says boolean; `0`, `"true"` and `"yes"` were taken (issue 21)."""
    response = client.post("/api/graph", json={"source": "a - b", "expand_derived": value})
    assert response.status_code == 422
    assert response.json()["error"]["message"] == "expand_derived: Input should be a valid boolean"


@pytest.mark.parametrize("value", [True, False])
def test_expand_derived_takes_true_and_false(client, value):
    response = client.post("/api/graph", json={"source": "a - b", "expand_derived": value})
    assert response.status_code == 200


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("\x1b[31mred\x07", "␛[31mred␇"),
        ("tab\tstays", "tab\tstays"),
        ("line\nbreak\r", "line␊break␍"),
        ("del\x7f c1\x9b", "del␡ c1\ufffd"),
        ("bidi \u202eevil\u2066", "bidi \ufffdevil\ufffd"),
        ("ünïcödé x₁ ✓", "ünïcödé x₁ ✓"),
    ],
)
def test_terminal_safe_shows_controls_one_character_for_one(text, shown):
    from chainrule.app.cli import terminal_safe

    assert terminal_safe(text) == shown
    assert len(terminal_safe(text)) == len(text)  # so the caret under a snippet lines up


def test_render_never_writes_the_programs_escapes_to_the_terminal(tmp_path, capsys):
    """Issue 21: an error snippet wrote the program's raw escape sequences to stderr."""
    program = "a = 1\n\x1b]0;owned\x07\x1b[2Jb + \u202e"
    assert main(["render", program, "-o", str(tmp_path / "x.svg")]) == 1
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err and "\u202e" not in err
    assert err.splitlines() == [
        "SyntaxError: unexpected character U+001B (line 2, column 1)",
        "  ␛]0;owned␇␛[2Jb + \ufffd",
        "  ^",
    ]


def test_render_from_a_real_process_writes_only_safe_text(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "chainrule.app.cli", "render", "-", "-o", str(tmp_path / "x.svg")],
        input="x\x1b[31m +\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert "\x1b" not in result.stderr and "␛[31m" in result.stderr
