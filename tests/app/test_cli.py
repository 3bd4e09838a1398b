"""app/cli.py: `chainrule render` draws from the terminal; `chainrule serve` parses its options."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from app.cli import build_parser, main, parse_values


def test_render_writes_an_svg(tmp_path):
    output = tmp_path / "graph.svg"
    assert main(["render", "a*b+c", "-o", str(output), "--values", "a=2,b=3"]) == 0
    texts = [
        t.text for t in ET.fromstring(output.read_bytes()).iter("{http://www.w3.org/2000/svg}text")
    ]
    assert "data 6.0000" in texts  # a*b with a=2, b=3


@pytest.mark.parametrize(
    ("name", "magic"), [("g.png", b"\x89PNG"), ("g.pdf", b"%PDF"), ("g.dot", b"digraph")]
)
def test_render_picks_the_format_from_the_extension(tmp_path, name, magic):
    output = tmp_path / name
    assert main(["render", "relu(a*b + d)", "-o", str(output)]) == 0
    assert output.read_bytes().startswith(magic)


def test_render_reports_a_program_error_with_a_caret(tmp_path, capsys):
    assert main(["render", "a +* b", "-o", str(tmp_path / "x.svg")]) == 1
    err = capsys.readouterr().err
    assert "SyntaxError" in err and "a +* b" in err and "^" in err
    assert not (tmp_path / "x.svg").exists()


def test_values_parse_and_reject_nonsense():
    assert parse_values("a=2, b=-3.5") == {"a": 2.0, "b": -3.5}
    with pytest.raises(Exception, match="name=number"):
        parse_values("a")


def test_serve_options():
    args = build_parser().parse_args(["serve", "--port", "9000", "--workers", "3"])
    assert (args.port, args.workers, args.host) == (9000, 3, "127.0.0.1")
