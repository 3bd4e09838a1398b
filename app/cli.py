"""`chainrule serve` runs the server; `chainrule render "a*b+c" -o g.svg` draws a graph.

Every failure is one clear line on stderr and a non-zero exit, never a traceback: 2 for a wrong
command line (as argparse), 1 for a program, a drawing or a file that fails.
"""

from __future__ import annotations

import argparse
import errno
import os
import re
import shutil
import socket
import sys
from pathlib import Path
from typing import Any, get_args

from pydantic import ValidationError

from chainrule import engine
from chainrule.app.api.graph_body import trace_dict
from chainrule.app.api.schemas import GraphRequest
from chainrule.app.export.drawing import (
    UNSAFE_TEXT,
    DrawingFormat,
    ExportFailed,
    ExportLimits,
    render,
)
from chainrule.app.layout.graphviz import Graphviz
from chainrule.app.settings import get_settings
from chainrule.engine.errors import LineIndex
from chainrule.notebook.traces import names_a_file

FORMATS = get_args(DrawingFormat)
CLI_TIMEOUT_S = 60.0  # a drawing asked for at the terminal may take longer than a request


def parse_values(text: str) -> dict[str, float]:
    """`a=2,b=-3` → `{"a": 2.0, "b": -3.0}`."""
    values = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, number = item.partition("=")
        if not sep:
            raise argparse.ArgumentTypeError(f"expected name=number, got {item!r}")
        try:
            values[name.strip()] = float(number)
        except ValueError as error:
            raise argparse.ArgumentTypeError(f"{number!r} is not a number") from error
    return values


def port_number(text: str) -> int:
    """A TCP port, 1 to 65535."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port: 1 to 65535")
    return port


def build_parser() -> argparse.ArgumentParser:
    settings = get_settings()
    parser = argparse.ArgumentParser(prog="chainrule", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="run the web app (uvicorn)")
    serve.add_argument("--host", default=settings.host)
    serve.add_argument("--port", type=port_number, default=settings.port)
    serve.add_argument("--workers", type=int, default=settings.workers)

    draw = commands.add_parser("render", help="draw a program's graph to a file")
    draw.add_argument(
        "source",
        help='the program, e.g. "a*b+c", or a file holding it; "-" reads standard input',
    )
    draw.add_argument("-o", "--output", required=True, help="output file; '-' is stdout")
    draw.add_argument("--values", type=parse_values, default=None, help="leaf values: a=2,b=-3")
    draw.add_argument(
        "--format", choices=FORMATS, help="default: the output's extension (svg for '-')"
    )
    draw.add_argument("--expand-derived", action="store_true", help="draw -, / from primitives")
    return parser


def uvicorn_options() -> dict[str, object]:
    """How `chainrule serve` runs uvicorn (the Makefile and the image say the same).

    No permessage-deflate on the live class's WebSockets: its messages are a few hundred bytes,
    and each compressed socket holds zlib state (bench/classroom.py: 83 KB per student with it,
    39 KB without). A message is at most 1 MiB, as a request body is (uvicorn: 16 MiB); a
    class's socket bounds its own far lower (live_class/connection.py). `X-Forwarded-For` is
    believed only from the addresses in `FORWARDED_ALLOW_IPS` (the proxy's; none by default:
    uvicorn's own default trusts 127.0.0.1, so a header from any local client would pick the
    address that the rate limits and the class's guess limit count)."""
    return {
        "ws_per_message_deflate": False,
        "ws_max_size": 1_048_576,
        "proxy_headers": True,
        "forwarded_allow_ips": os.environ.get("FORWARDED_ALLOW_IPS", ""),
    }


def unavailable(host: str, port: int) -> str | None:
    """Why a server could not listen on `host`:`port`, said with what to do, or None when it
    can: bound and closed again at once, with SO_REUSEADDR as uvicorn binds (a port a server
    just left is free). Said before uvicorn starts, whose own error on a port in use is a log
    line among its start-up's, and `make run`'s `Error 3`."""
    try:
        family, kind, _, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        with socket.socket(family, kind) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except socket.gaierror as error:
        return (
            f"cannot serve on {host!r}: {error.strerror} (use an address of this machine: "
            "127.0.0.1, or 0.0.0.0 for every one)"
        )
    except OSError as error:
        where = f"{host}:{port}"
        if error.errno == errno.EADDRINUSE:
            other = port + 1 if port < 65535 else 8000
            return (
                f"{where} is in use (another chainrule, or another server): stop it, or serve "
                f"on a free port: make run PORT={other}, or chainrule serve --port {other}"
            )
        if error.errno == errno.EACCES:
            return f"{where}: {error.strerror} (ports below 1024 need root: use 8000, say)"
        return f"cannot serve on {where}: {error.strerror}"
    return None


def serve(args: argparse.Namespace) -> int:
    try:
        import uvicorn
    except ImportError:  # `pip install chainrule` is the Python API and the widget alone
        return fail("chainrule serve needs the web app's packages: pip install 'chainrule[server]'")
    if (problem := unavailable(args.host, args.port)) is not None:
        return fail(problem)

    uvicorn.run(
        "chainrule.app.main:app", host=args.host, port=args.port, workers=args.workers,
        **uvicorn_options(),
    )  # fmt: skip
    return 0


# What a terminal would act on rather than show: the drawings' UNSAFE_TEXT (C0 and C1
# controls: ESC starts a sequence that can recolour, move the cursor, retitle the window or
# clear the screen; the bidirectional overrides that make text read in another order).
_UNSAFE = UNSAFE_TEXT


def _shown(match: re.Match[str]) -> str:
    """A control as its Unicode control picture (ESC is ␛), one character for one, so a caret
    under the line still lines up; a tab stays a tab."""
    char = match.group()
    if char == "\t":
        return char
    if char < " ":
        return chr(0x2400 + ord(char))
    return "\u2421" if char == "\x7f" else "\ufffd"


def terminal_safe(text: str) -> str:
    """`text` with every character a terminal would act on shown instead (see _UNSAFE)."""
    return _UNSAFE.sub(_shown, text)


def say(line: str) -> None:
    """Write one line to stderr, made terminal-safe: it may quote the program or a path."""
    sys.stderr.write(terminal_safe(line) + "\n")


def fail(message: str, code: int = 1) -> int:
    """Say what went wrong on one line of stderr; the exit code to return."""
    say(f"chainrule: {message}")
    return code


def output_format(output: str, chosen: str | None) -> str | None:
    """--format, else the output's extension; svg for stdout or a name without one."""
    if chosen:
        return chosen
    suffix = Path(output).suffix.lstrip(".").lower()
    if output == "-" or not suffix:
        return "svg"
    return suffix if suffix in FORMATS else None


def unwritable(output: str) -> str | None:
    """Why `output` cannot be written, checked before the work; None if it looks writable."""
    path = Path(output)
    if path.is_dir():
        return f"cannot write {output!r}: it is a directory"
    if not path.parent.is_dir():
        return f"cannot write {output!r}: no directory {str(path.parent)!r}"
    return None


def warning_lines(trace: dict[str, Any]) -> list[str]:
    """The trace's warnings as the terminal says them, one line each (the page shows the same
    beside its graph): the program's (a statement the result does not use), then each node's
    (a division by zero, the logarithm of a negative), led by the line that computes it."""
    lines = LineIndex(trace["source"])
    said = [warning["message"] for warning in trace["warnings"]]
    for node in trace["nodes"]:
        for warning in node["warnings"]:
            line, _ = lines.position(node["span"][0])
            said.append(f"line {line}: {warning['message']}")
    return said


def draw(args: argparse.Namespace) -> int:
    fmt = output_format(args.output, args.format)
    if fmt is None:
        return fail(
            f"cannot tell the format from {args.output!r}: name the file .svg, .png, .pdf or "
            ".dot, or pass --format",
            2,
        )
    if args.output != "-" and (problem := unwritable(args.output)):
        return fail(problem)
    dot_binary = shutil.which("dot") or ""
    if fmt != "dot" and not dot_binary:
        return fail(
            f"Graphviz (dot) is not on the PATH: install it to draw {fmt}, or use --format dot"
        )
    if args.source == "-":
        try:
            source = sys.stdin.read()
        except (OSError, UnicodeDecodeError) as error:
            return fail(f"cannot read the program from standard input: {error}")
    elif names_a_file(args.source):
        try:
            source = Path(args.source).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            return fail(f"cannot read the program from {args.source!r}: {error}")
    else:
        source = args.source
    try:
        request = GraphRequest(
            source=source, values=args.values, expand_derived=args.expand_derived
        )
        trace = trace_dict(request, get_settings())
        settings = get_settings()
        graphviz = Graphviz.from_settings(settings, binary=dot_binary)
        limits = ExportLimits.from_settings(settings, timeout_s=CLI_TIMEOUT_S)
        drawing = render(trace, fmt, graphviz=graphviz, limits=limits)
    except ValidationError as error:
        return fail(f"invalid input: {error.errors()[0]['msg']}")
    except engine.ProgramError as error:
        located = f" (line {error.line}, column {error.column})" if error.line else ""
        say(f"{error.type}: {error.message}{located}")
        if error.snippet:
            say(f"  {error.snippet}")
            say(f"  {error.caret}")
        if args.source != "-" and (meant := meant_a_file(args.source)):
            say(f"chainrule: {meant}")
        return 1
    except ExportFailed as error:
        return fail(str(error))
    for line in warning_lines(trace):
        say(f"chainrule: warning: {line}")
    try:
        if args.output == "-":
            sys.stdout.buffer.write(drawing)
            sys.stdout.flush()
        else:
            Path(args.output).write_bytes(drawing)
    except OSError as error:
        if args.output != "-":
            return fail(f"cannot write {args.output!r}: {error.strerror or error}")
        # What stays buffered would fail again when Python flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return fail(f"cannot write to standard output: {error.strerror or error}")
    return 0


def meant_a_file(source: str) -> str | None:
    """What to say of a `render` argument read as a program that was meant as a file's path
    (`chainrule render neuron.py` where there is none, or a folder): None for a program."""
    if any(blank in source for blank in " \t\n") or names_a_file(source):
        return None
    try:
        if Path(source).is_dir():
            return f"{source!r} is a folder: give a program, or the path of a file holding one"
    except (OSError, ValueError):
        return None
    if "/" in source or re.search(r"\.(py|txt|ipynb)$", source):
        return f"no file is named {source!r}: give a program, or the path of a file holding one"
    return None


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return serve(args) if args.command == "serve" else draw(args)


if __name__ == "__main__":
    sys.exit(main())
