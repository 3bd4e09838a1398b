"""The statements the value reader writes beside its program (engine/value_reader.py
`_Writer.statements`), held against the parser's own reading of the program's text: the
builder takes them instead of a parse (engine/tracing.py `written_parse`), so they must be the
parser's to the last offset."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chainrule.engine.parser import Expr, Statement, parse_program

STATEMENT_FIELDS = ("target", "target_start", "target_end", "line", "labels")
EXPR_FIELDS = ("kind", "op", "start", "end", "text", "parens")


def expr_difference(written: Expr, parsed: Expr, where: str = "expr") -> str | None:
    """The first difference between two expression trees (their types, every field, the sign
    of a zero too), or None; without recursion."""
    pending = [(written, parsed, where)]
    while pending:
        mine, theirs, at = pending.pop()
        if type(mine) is not type(theirs):
            return f"{at}: {type(mine).__name__} != {type(theirs).__name__}"
        for name in (*EXPR_FIELDS, "value"):
            ours, its = getattr(mine, name), getattr(theirs, name)
            if repr(ours) != repr(its):
                return f"{at}.{name}: {ours!r} != {its!r}"
        if len(mine.args) != len(theirs.args):
            return f"{at}: {len(mine.args)} operands != {len(theirs.args)}"
        pending.extend(
            (a, b, f"{at}.args[{k}]")
            for k, (a, b) in enumerate(zip(mine.args, theirs.args, strict=True))
        )
    return None


def postfix_difference(statement: Statement) -> str | None:
    """Whether a statement's postfix is its tree's nodes in post-order, a literal exponent
    (the right of `**`, a number) left out, each the tree's own object."""
    expected: list[Expr] = []
    pending: list[tuple[Expr, bool]] = [(statement.expr, False)]
    while pending:
        expr, expanded = pending.pop()
        if expanded:
            expected.append(expr)
            continue
        pending.append((expr, True))
        args = expr.args
        if expr.kind == "binary" and expr.op == "**" and args[1].kind == "num":
            args = args[:1]
        pending.extend((arg, False) for arg in reversed(args))
    if len(expected) != len(statement.postfix) or any(
        a is not b for a, b in zip(expected, statement.postfix, strict=True)
    ):
        return "postfix: not the tree's nodes in post-order"
    return None


def statements_difference(source: str, written: tuple[Sequence[Statement], int]) -> str | None:
    """The first way the statements written for `source` (and how deep they nest) differ from
    the parser's reading of it, or None."""
    statements, depth = written
    parsed, notes = parse_program(source)
    if notes:
        return f"the parser notes {notes}"
    if len(parsed) != len(statements):
        return f"{len(statements)} statements written, {len(parsed)} parsed"
    for number, (mine, theirs) in enumerate(zip(statements, parsed, strict=True), 1):
        for name in STATEMENT_FIELDS:
            if getattr(mine, name) != getattr(theirs, name):
                said = f"{getattr(mine, name)!r} != {getattr(theirs, name)!r}"
                return f"statement {number}.{name}: {said}"
        difference = expr_difference(mine.expr, theirs.expr) or postfix_difference(mine)
        if difference is not None:
            return f"statement {number} ({source.splitlines()[theirs.line - 1][:80]}): {difference}"
    if depth > 0:  # as deep as they nest: one level less is past the parser's limit
        try:
            parse_program(source, depth - 1)
        except Exception:  # noqa: BLE001 - LimitExceeded, as the limit says
            pass
        else:
            return f"nested {depth} deep as written, fewer as parsed"
    parse_program(source, depth)  # and no deeper
    return None


def checked_parsed(parsed: Any) -> Any:
    """engine/tracing.py `parsed`, which holds every reading the value reader wrote against
    the parser's (an AssertionError names the first difference)."""
    from chainrule.engine import tracing

    def checking(source: str, max_depth: int | None) -> Any:
        written = tracing._written.get()
        if written is not None and written[0] == source:
            difference = statements_difference(source, (written[2], written[1]))
            assert difference is None, difference
        return parsed(source, max_depth)

    return checking
