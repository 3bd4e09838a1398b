"""`chainrule serve` runs the server; `chainrule render "a*b+c" -o g.svg` draws a graph."""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import get_args

import engine
from app.export import ExportFailed, ExportFormat, render
from app.graph import trace_dict
from app.schemas import GraphRequest
from app.settings import get_settings

FORMATS = get_args(ExportFormat)


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


def build_parser() -> argparse.ArgumentParser:
    settings = get_settings()
    parser = argparse.ArgumentParser(prog="chainrule", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="run the web app (uvicorn)")
    serve.add_argument("--host", default=settings.host)
    serve.add_argument("--port", type=int, default=settings.port)
    serve.add_argument("--workers", type=int, default=settings.workers)

    draw = commands.add_parser("render", help="draw a program's graph to a file")
    draw.add_argument("source", help='the program, e.g. "a*b+c"; "-" reads standard input')
    draw.add_argument("-o", "--output", required=True, help="output file; '-' is stdout")
    draw.add_argument("--values", type=parse_values, default=None, help="leaf values: a=2,b=-3")
    draw.add_argument("--format", choices=FORMATS, help="default: the output's extension, or svg")
    draw.add_argument("--expand-derived", action="store_true", help="draw -, / from primitives")
    return parser


def serve(args: argparse.Namespace) -> int:
    import uvicorn

    uvicorn.run("app.main:app", host=args.host, port=args.port, workers=args.workers)
    return 0


def draw(args: argparse.Namespace) -> int:
    source = sys.stdin.read() if args.source == "-" else args.source
    suffix = Path(args.output).suffix.lstrip(".").lower()
    fmt = args.format or (suffix if suffix in FORMATS else "svg")
    request = GraphRequest(source=source, values=args.values, expand_derived=args.expand_derived)
    try:
        trace = trace_dict(request, get_settings())
        drawing = render(trace, fmt, dot_binary=shutil.which("dot") or "", timeout_s=60.0)
    except engine.ProgramError as error:
        located = f" (line {error.line}, column {error.column})" if error.line else ""
        sys.stderr.write(f"{error.type}: {error.message}{located}\n")
        if error.snippet:
            sys.stderr.write(f"  {error.snippet}\n  {error.caret}\n")
        return 1
    except ExportFailed as error:
        sys.stderr.write(f"{error}\n")
        return 1
    if args.output == "-":
        sys.stdout.buffer.write(drawing)
    else:
        Path(args.output).write_bytes(drawing)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return serve(args) if args.command == "serve" else draw(args)


if __name__ == "__main__":
    sys.exit(main())
