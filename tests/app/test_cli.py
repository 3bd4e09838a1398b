"""app/cli.py: `chainrule render` draws from the terminal; `chainrule serve` parses its options."""

from __future__ import annotations

import io
import socket
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from chainrule.app.cli import build_parser, main, parse_values

ROOT = Path(__file__).resolve().parents[2]


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


def run_cli(*args: str, **kwargs) -> subprocess.CompletedProcess:
    """`python -m app.cli …`: the real entry point, tracebacks and all."""
    kwargs.setdefault("stdout", subprocess.PIPE)
    return subprocess.run(
        [sys.executable, "-m", "chainrule.app.cli", *args],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
        **kwargs,
    )


def test_render_says_the_programs_warnings_on_stderr(tmp_path):
    """What the page shows beside the graph, the terminal says too: a drawing with an `inf` in
    it came with no word of where it came from."""
    output = tmp_path / "g.svg"
    result = run_cli("render", "a = 2\nb = 3\nc = log(-a)\nd = c + 1/(a - 2)", "-o", str(output))
    assert result.returncode == 0 and output.read_bytes().startswith(b"<?xml")
    assert result.stderr == (
        "chainrule: warning: line 2: 'b' is not used by the result (the last statement), so it "
        "is left out of the graph\n"
        "chainrule: warning: line 3: log(−2) is not a real number: nan\n"
        "chainrule: warning: line 4: 1 / 0 divides by zero: inf\n"
    )
    assert run_cli("render", "a * b", "-o", str(output)).stderr == ""


def test_serve_on_a_port_in_use_says_so_and_how_to_pick_another():
    """A second `make run` (or a port another server holds): one line that says what to do,
    before uvicorn starts (whose own error was a log line among its start-up's, then exit 3)."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = run_cli("serve", "--port", str(port))
    assert result.returncode == 1
    assert result.stderr == (
        f"chainrule: 127.0.0.1:{port} is in use (another chainrule, or another server): stop it, "
        f"or serve on a free port: make run PORT={port + 1}, or chainrule serve --port {port + 1}\n"
    )


def test_serve_on_no_such_host_or_port_says_so():
    result = run_cli("serve", "--host", "no-such-host.invalid")
    assert result.returncode == 1
    assert result.stderr.startswith("chainrule: cannot serve on 'no-such-host.invalid': ")
    assert result.stderr.endswith(
        "(use an address of this machine: 127.0.0.1, or 0.0.0.0 for every one)\n"
    )
    result = run_cli("serve", "--port", "70000")
    assert result.returncode == 2
    assert result.stderr.endswith("argument --port: 70000 is not a port: 1 to 65535\n")


def test_an_output_in_a_missing_directory_is_one_line_not_a_traceback():
    result = run_cli("render", "a*b", "-o", "/nonexistent/x.svg")
    assert result.returncode == 1
    assert result.stderr == (
        "chainrule: cannot write '/nonexistent/x.svg': no directory '/nonexistent'\n"
    )
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("output", "message"),
    [
        ("{tmp}", "cannot write '{tmp}': it is a directory"),
        (
            "{tmp}/file.txt/x.svg",
            "cannot write '{tmp}/file.txt/x.svg': no directory '{tmp}/file.txt'",
        ),
        ("/dev/full", "cannot write '/dev/full': No space left on device"),
    ],
)
def test_every_unwritable_output_is_one_clear_line(tmp_path, capsys, output, message):
    (tmp_path / "file.txt").write_text("")
    output = output.format(tmp=tmp_path)
    assert main(["render", "a*b", "-o", output]) == 1
    assert capsys.readouterr().err == f"chainrule: {message.format(tmp=tmp_path)}\n"


def test_a_failing_standard_output_is_one_clear_line():
    with open("/dev/full", "wb") as full:
        result = run_cli("render", "a*b", "-o", "-", stdout=full)
    assert result.returncode == 1
    assert result.stderr == "chainrule: cannot write to standard output: No space left on device\n"


def test_an_unknown_extension_asks_for_a_format(tmp_path, capsys):
    assert main(["render", "a*b", "-o", str(tmp_path / "g.gif")]) == 2
    assert capsys.readouterr().err == (
        f"chainrule: cannot tell the format from '{tmp_path / 'g.gif'}': name the file .svg, "
        ".png, .pdf or .dot, or pass --format\n"
    )
    assert not (tmp_path / "g.gif").exists()
    assert main(["render", "a*b", "-o", str(tmp_path / "g.gif"), "--format", "png"]) == 0
    assert (tmp_path / "g.gif").read_bytes().startswith(b"\x89PNG")


def test_an_unknown_format_option_is_a_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["render", "a*b", "-o", str(tmp_path / "g.svg"), "--format", "gif"])
    assert exit_.value.code == 2
    assert "argument --format: invalid choice: 'gif'" in capsys.readouterr().err


def test_an_unreadable_standard_input_is_one_clear_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"a\xff"), encoding="utf-8"))
    assert main(["render", "-", "-o", str(tmp_path / "x.svg")]) == 1
    assert capsys.readouterr().err == (
        "chainrule: cannot read the program from standard input: 'utf-8' codec can't decode "
        "byte 0xff in position 1: invalid start byte\n"
    )


def test_a_program_from_standard_input_is_drawn():
    result = run_cli("render", "-", "-o", "-", "--format", "dot", input="a = 2; b = a * 3")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("digraph chainrule {")


def test_a_value_name_that_is_not_text_is_one_clear_line(tmp_path, capsys):
    assert main(["render", "a", "-o", str(tmp_path / "x.svg"), "--values", "\udcff=1"]) == 1
    assert capsys.readouterr().err == (
        "chainrule: invalid input: Value error, must be valid Unicode text (it contains a lone "
        "surrogate)\n"
    )


def test_a_bad_value_is_one_clear_line(tmp_path, capsys):
    assert main(["render", "a*b", "-o", str(tmp_path / "x.svg"), "--values", "a=nan"]) == 1
    assert capsys.readouterr().err == (
        "BadValue: the value of 'a' must be a finite number, got nan\n"
    )


def test_without_graphviz_only_dot_is_drawn(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("chainrule.app.cli.shutil.which", lambda _name: None)
    assert main(["render", "a*b", "-o", str(tmp_path / "x.svg")]) == 1
    assert capsys.readouterr().err == (
        "chainrule: Graphviz (dot) is not on the PATH: install it to draw svg, or use "
        "--format dot\n"
    )
    assert main(["render", "a*b", "-o", str(tmp_path / "x.dot")]) == 0
    assert (tmp_path / "x.dot").read_text().startswith("digraph chainrule {")


def test_a_program_in_a_file_is_drawn_from_its_path(tmp_path, capsys):
    # A stranger's first try: `chainrule render neuron.py -o g.dot` drew the text "neuron.py"
    # (a SyntaxError at '.py') instead of the program in it.
    program = tmp_path / "neuron.py"
    program.write_text("a = 2\nb = -3\nc = a * b + a\n", encoding="utf-8")
    from_file, from_text = tmp_path / "file.dot", tmp_path / "text.dot"
    assert main(["render", str(program), "-o", str(from_file)]) == 0
    assert main(["render", program.read_text(), "-o", str(from_text)]) == 0
    assert from_file.read_bytes() == from_text.read_bytes()
    assert b"label" in from_file.read_bytes() and capsys.readouterr().err == ""


def test_a_file_that_is_no_text_is_one_clear_line(tmp_path, capsys):
    program = tmp_path / "bytes.py"
    program.write_bytes(b"\xff\xfe")
    assert main(["render", str(program), "-o", str(tmp_path / "x.svg")]) == 1
    assert capsys.readouterr().err == (
        f"chainrule: cannot read the program from {str(program)!r}: 'utf-8' codec can't decode "
        "byte 0xff in position 0: invalid start byte\n"
    )


def test_a_path_that_names_no_file_says_so_after_the_programs_error(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["render", "neuron.py", "-o", "x.svg"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("SyntaxError: '.py' is not part of the language")
    assert err.endswith(
        "chainrule: no file is named 'neuron.py': give a program, or the path of a file "
        "holding one\n"
    )
    (tmp_path / "programs").mkdir()
    assert main(["render", "programs/", "-o", "x.svg"]) == 1
    assert capsys.readouterr().err.endswith(
        "chainrule: 'programs/' is a folder: give a program, or the path of a file holding one\n"
    )
    # A program that fails is only its error: `a +* b` names no file.
    assert main(["render", "a +* b", "-o", "x.svg"]) == 1
    assert "chainrule:" not in capsys.readouterr().err
