"""Parser tree table and the table of bad programs with exact type, message and position."""

import pytest

from chainrule import engine
from chainrule.engine.lexer import SUBSET
from chainrule.engine.ops import FUNCTIONS
from chainrule.engine.parser import parse

# The language's functions, as a message lists them (the table's order).
ALL_FUNCTIONS = ", ".join(FUNCTIONS)

NOTHING_TO_TRACE = (
    "nothing to trace: every statement is skipped (imports, print(...), draw_dot(...), x.grad, "
    "…); write an expression such as a * b + c"
)


def needs_running(line: int, what: str) -> str:
    """The message of a NeedsRunning error about `what` on `line`."""
    return (
        f"line {line}: {what} must run before chainrule can read its graph: chainrule reads "
        "straight-line code as data and never runs it. Run the code first (in a notebook, "
        "chainrule.show(x) reads the graph it built)"
    )


TREES = [
    ("2 ** 3 ** 2", "(** 2 (** 3 2))"),
    ("2 ^ 3 ^ 2", "(** 2 (** 3 2))"),
    ("a + b * c", "(+ a (* b c))"),
    ("(a + b) * c", "(* (+ a b) c)"),
    ("a - b - c", "(- (- a b) c)"),
    ("a / b / c", "(/ (/ a b) c)"),
    ("a * b / c * d", "(* (/ (* a b) c) d)"),
    ("-a ** 2", "(neg (** a 2))"),
    ("-a * b", "(* (neg a) b)"),
    ("2 ** -1", "(** 2 -1)"),
    ("a ** -b ** c", "(** a (neg (** b c)))"),
    ("-8", "-8"),
    ("- 8", "-8"),
    ("-(8)", "(neg 8)"),
    ("--8", "(neg -8)"),
    ("-8 ** 2", "(neg (** 8 2))"),
    ("(-8) ** 2", "(** -8 2)"),
    ("a - -3", "(- a -3)"),
    (".5 + 1e-3 + 6.8813735870195432", "(+ (+ .5 1e-3) 6.8813735870195432)"),
    ("relu(a * b + d)", "(relu (+ (* a b) d))"),
    ("tanh(exp(log(sigmoid(x))))", "(tanh (exp (log (sigmoid x))))"),
    ("((((a))))", "a"),
    ("x1 * w_2 + bias", "(+ (* x1 w_2) bias)"),
    ("a # comment * b", "a"),
    ("-relu(x)", "(neg (relu x))"),
    ("a ** b ** c ** d", "(** a (** b (** c d)))"),
]


@pytest.mark.parametrize(("source", "tree"), TREES)
def test_tree(source: str, tree: str) -> None:
    (statement,) = parse(source)
    assert str(statement.expr) == tree


def test_statements_split_on_newlines_and_semicolons() -> None:
    statements = parse("a = 2; b = -3\n\n# note\nc = a*b;\nc + 1")
    assert [str(s) for s in statements] == ["a = 2", "b = -3", "c = (* a b)", "(+ c 1)"]
    assert [s.line for s in statements] == [1, 1, 4, 5]


# What every error about a sign copied from a page adds (engine/lexer.py TYPED_SIGNS).
COPIED = " (a sign copied from a page or a PDF only looks like the keyboard's)"

ERRORS = [
    # (source, type, message, line, column)
    (
        "sqrtt(2)",
        "UnknownFunction",
        f"unknown function 'sqrtt' — did you mean one of: {ALL_FUNCTIONS}?",
        1,
        1,
    ),
    ("tahn(x)", "UnknownFunction", "unknown function 'tahn' — did you mean tanh?", 1, 1),
    (
        "a = 1\nc = b + 1\nd = 3\nb = 2\nc",
        "UseBeforeAssign",
        "'b' is used on line 2 but assigned on line 4",
        2,
        5,
    ),
    ("a = a + 1", "UseBeforeAssign", "'a' is used in its own definition on line 1", 1, 5),
    (
        "c = b + 1; b = 2",
        "UseBeforeAssign",
        "'b' is used before it is assigned (later on line 1, column 12): "
        "assign 'b' before the statement that uses it",
        1,
        5,
    ),
    (
        "a = 1\nb = 2\na = 3",
        "AssignedTwice",
        "'a' is assigned twice as a number (lines 1 and 3): a leaf is declared once; "
        "give the second one a new name",
        3,
        1,
    ),
    (
        "b = 1\na = b * 2\na = 3",
        "AssignedTwice",
        "'a' is given a number on line 3 after it was computed on line 2: a leaf's number comes "
        "first; give it a new name",
        3,
        1,
    ),
    (
        "d *= 2",
        "UseBeforeAssign",
        "'d' has no value to change yet on line 1: assign 'd' before 'd *='",
        1,
        1,
    ),
    ("a.grad + 1", "SyntaxError", f"'.grad' is not part of the language: {SUBSET}", 1, 2),
    ("a.relu(2)", "ArgumentCount", ".relu() takes no argument", 1, 3),
    (
        "a * b.backward()",
        "SyntaxError",
        "backward() marks the result on a line of its own: L.backward()",
        1,
        6,
    ),
    (
        "Value(x)",
        "SyntaxError",
        "Value(...) takes a number and, if you like, a label, as in Value(-3.0, label='b'); "
        + SUBSET,
        1,
        7,
    ),
    ("Value(2, 'a')", "SyntaxError", "strings are not part of the language", 1, 10),
    ("Value(2, name='a')", "SyntaxError", "strings are not part of the language", 1, 15),
    ("vpow(a)", "ArgumentCount", "vpow takes 2 arguments, got 1", 1, 1),
    (
        "a = 1; a = 2",
        "AssignedTwice",
        "'a' is assigned twice on line 1: give the second one a new name",
        1,
        8,
    ),
    ("a +", "SyntaxError", "unexpected end of input: '+' needs a right-hand side", 1, 4),
    ("a +\nb", "SyntaxError", "unexpected end of line: '+' needs a right-hand side", 1, 4),
    (
        "a = 2\nb = a *   \n",
        "SyntaxError",
        "unexpected end of line: '*' needs a right-hand side",
        2,
        11,
    ),
    ('x = "hi"', "SyntaxError", "strings are not part of the language", 1, 5),
    ("x = 'hi'", "SyntaxError", "strings are not part of the language", 1, 5),
    ("", "SyntaxError", "the program is empty: write an expression such as a * b + c", 1, 1),
    (
        "  # nothing\n\n",
        "SyntaxError",
        "the program is empty: write an expression such as a * b + c",
        1,
        1,
    ),
    ("a $ b", "SyntaxError", "unexpected character '$'", 1, 3),
    (
        "ｘ + 1",
        "SyntaxError",
        "unexpected character 'ｘ' (U+FF58 FULLWIDTH LATIN SMALL LETTER X): a name is ASCII "
        "letters, digits and '_' (a label may hold any letter: x.label = 'ｘ')",
        1,
        1,
    ),
    # A stranger's test: a Greek letter, a Python line continuation inside brackets, and `@`
    # between numbers were each reported without saying what to do instead.
    (
        "α = 2",
        "SyntaxError",
        "unexpected character 'α' (U+03B1 GREEK SMALL LETTER ALPHA): a name is ASCII letters, "
        "digits and '_' (a label may hold any letter: x.label = 'α')",
        1,
        1,
    ),
    (
        "a = 2\nb = (a +\n  3)",
        "SyntaxError",
        "unexpected end of line: '+' needs a right-hand side on its own line (a statement ends "
        "with its line, even inside brackets: join the lines)",
        2,
        9,
    ),
    (
        "a = 1\nb = a +\nc = 2",
        "SyntaxError",
        "unexpected end of line: '+' needs a right-hand side",
        2,
        8,
    ),
    # Signs copied from a page, a PDF, a slide or chainrule's own numbers (`−3.000`): the
    # operator to write instead.
    (
        "a −b",
        "SyntaxError",
        "unexpected character '−' (U+2212 MINUS SIGN): type '-' instead" + COPIED,
        1,
        3,
    ),
    (
        "a = 2\nb = a · 3",
        "SyntaxError",
        "unexpected character '·' (U+00B7 MIDDLE DOT): type '*' instead" + COPIED,
        2,
        7,
    ),
    (
        "b = 4 ÷ 2",
        "SyntaxError",
        "unexpected character '÷' (U+00F7 DIVISION SIGN): type '/' instead" + COPIED,
        1,
        7,
    ),
    (
        "x = 3\ny = x²",
        "SyntaxError",
        "unexpected character '²' (U+00B2 SUPERSCRIPT TWO): type '** 2' instead" + COPIED,
        2,
        6,
    ),
    ("a ° b", "SyntaxError", "unexpected character '°' (U+00B0 DEGREE SIGN)", 1, 3),
    ("a\x00", "SyntaxError", "unexpected character U+0000 (NUL)", 1, 2),
    ("a\n+\ud800", "SyntaxError", "unexpected character U+D800 (a lone surrogate)", 2, 2),
    ("__import__('os')", "SyntaxError", "strings are not part of the language", 1, 12),
    (
        "__import__(os)",
        "UnknownFunction",
        f"unknown function '__import__' — did you mean one of: {ALL_FUNCTIONS}?",
        1,
        1,
    ),
    (
        "a.b",
        "SyntaxError",
        f"'.b' is not part of the language: {SUBSET}",
        1,
        2,
    ),
    ("a[0]", "NeedsRunning", needs_running(1, "a list or an index ('[ ]')"), 1, 2),
    ("lambda x: x", "NeedsRunning", needs_running(1, "a function ('lambda')"), 1, 1),
    ("import os", "SyntaxError", NOTHING_TO_TRACE, 1, 1),
    ("def f(): 1", "NeedsRunning", needs_running(1, "a function ('def')"), 1, 1),
    (
        "(x := 3)",
        "SyntaxError",
        "':=' is not part of the language: write name = expression as a statement",
        1,
        4,
    ),
    ("a < b", "SyntaxError", "comparisons are not part of the language", 1, 3),
    ("a == b", "SyntaxError", "comparisons are not part of the language", 1, 3),
    ("a != b", "SyntaxError", "comparisons are not part of the language", 1, 3),
    ("relu(a, b)", "ArgumentCount", "relu takes 1 argument, got 2", 1, 1),
    ("x = tanh()", "ArgumentCount", "tanh takes 1 argument, got 0", 1, 5),
    ("(a + b", "SyntaxError", "this '(' is never closed (add a ')' to close it)", 1, 1),
    (
        "a * (b + (c - d)\ne",
        "SyntaxError",
        "this '(' is never closed (add a ')' to close it)",
        1,
        5,
    ),
    ("exp(1", "SyntaxError", "this '(' is never closed (add a ')' to close it)", 1, 4),
    # Closed on a later line, as Python's implicit joining would read it: the line it closes on,
    # and that a statement ends with its line (it said "never closed").
    (
        "a = 2\no = (\n  a * 3\n)",
        "SyntaxError",
        "this '(' is closed on line 4, but a statement ends with its line, even inside brackets: "
        "join its lines",
        2,
        5,
    ),
    (
        "a = 2\nb = tanh(\n  a)  # )",
        "SyntaxError",
        "this '(' is closed on line 3, but a statement ends with its line, even inside brackets: "
        "join its lines",
        2,
        9,
    ),
    ("x = (1 + 2\ny = 3", "SyntaxError", "this '(' is never closed (add a ')' to close it)", 1, 5),
    ("a + b)", "SyntaxError", "unmatched ')': there is no '(' before it", 1, 6),
    ("()", "SyntaxError", "empty parentheses: put an expression inside ( )", 1, 1),
    ("relu + 1", "SyntaxError", "'relu' is a function: call it as relu(x)", 1, 1),
    ("relu = 3", "SyntaxError", "'relu' is a function name; choose another name to assign", 1, 1),
    ("1" * 401, "SyntaxError", "number has 401 digits; at most 400 are allowed", 1, 1),
    ("1e309", "SyntaxError", "number 1e309 is too large (max about 1.8e308)", 1, 1),
    ("a b", "SyntaxError", "missing operator between 'a' and 'b' (for a product write a*b)", 1, 3),
    ("2a", "SyntaxError", "'2a' is neither a number nor a name: for a product write 2*a", 1, 1),
    ("1.2.3", "SyntaxError", "a number can have only one decimal point", 1, 1),
    (
        "x = 1_000",
        "SyntaxError",
        "'1_000' is not a number: write 1000 (no _ in numbers)",
        1,
        5,
    ),
    (
        "1e_5",
        "SyntaxError",
        "'1e_5' is not a number: write 1e5 (no _ in numbers)",
        1,
        1,
    ),
    (
        "a * 5.e",
        "SyntaxError",
        "'5.e' is neither a number nor a name: an exponent needs digits right after the e, "
        "as in 5.e3",
        1,
        5,
    ),
    (
        "2ex",
        "SyntaxError",
        "'2ex' is neither a number nor a name: an exponent needs digits right after the e, "
        "as in 2e3; for a product write 2*ex",
        1,
        1,
    ),
    ("5.x", "SyntaxError", "'5.x' is neither a number nor a name: for a product write 5*x", 1, 1),
    (
        "2_a",
        "SyntaxError",
        "'2_a' is neither a number nor a name: a name cannot start with a digit",
        1,
        1,
    ),
    (
        "0x1F",
        "SyntaxError",
        "'0x1F' is neither a number nor a name: only decimal numbers are part of the language",
        1,
        1,
    ),
    ("a = +2 * b", "SyntaxError", "a leading '+' is not part of the language; remove it", 1, 5),
    ("a = +x", "SyntaxError", "a leading '+' is not part of the language; remove it", 1, 5),
    (
        "a = 2\r\nb = a *\r\n",
        "SyntaxError",
        "unexpected end of line: '*' needs a right-hand side",
        2,
        8,
    ),
    ("a = # note\r\n", "SyntaxError", "unexpected end of line: '=' needs a right-hand side", 1, 11),
    ("+a", "SyntaxError", "a leading '+' is not part of the language; remove it", 1, 1),
    (
        "a = b = 2",
        "SyntaxError",
        "only a name can be assigned, at the start of a statement: name = expression",
        1,
        7,
    ),
    ("a * * b", "SyntaxError", "'*' needs a right-hand side, found '*'", 1, 5),
    ("* b", "SyntaxError", "'*' needs a left-hand side", 1, 1),
    ("-", "SyntaxError", "unexpected end of input: '-' needs an operand", 1, 2),
    ("a = ", "SyntaxError", "unexpected end of input: '=' needs a right-hand side", 1, 4),
    ("a, b", "SyntaxError", "',' only separates the arguments of a function call", 1, 2),
    # A decimal comma, as Estonian and Russian write numbers: the number to write, the whole
    # of it underlined; a list of numbers or a name before the comma is a stray comma.
    (
        "a = 0,5",
        "SyntaxError",
        "'0,5' is no number: write 0.5 (a decimal point, not a comma)",
        1,
        5,
    ),
    (
        "b = 3\nc = b * 12,75",
        "SyntaxError",
        "'12,75' is no number: write 12.75 (a decimal point, not a comma)",
        2,
        9,
    ),
    ("a = 1,2,3", "SyntaxError", "',' only separates the arguments of a function call", 1, 6),
    (
        "x2 = 1\ny = x2,5",
        "SyntaxError",
        "',' only separates the arguments of a function call",
        2,
        7,
    ),
    (
        "True",
        "SyntaxError",
        f"'True' is a Python keyword; it is not part of the language; {SUBSET}",
        1,
        1,
    ),
    (
        "a \\\n+ b",
        "SyntaxError",
        "'\\' is not part of the language: end a statement with a newline",
        1,
        3,
    ),
]


@pytest.mark.parametrize(("source", "kind", "message", "line", "column"), ERRORS)
def test_error(source: str, kind: str, message: str, line: int, column: int) -> None:
    with pytest.raises(engine.ProgramError) as caught:
        engine.trace(source)
    error = caught.value.to_dict()
    assert (error["type"], error["message"], error["line"], error["column"]) == (
        kind,
        message,
        line,
        column,
    )


def test_a_decimal_comma_underlines_the_number_and_is_said_in_the_pages_language() -> None:
    with pytest.raises(engine.ProgramError) as caught:
        engine.trace("b = 3\nc = b * 12,75")
    error = caught.value.to_dict()
    assert (error["snippet"], error["caret"]) == ("c = b * 12,75", "        ^^^^^")
    assert caught.value.to_dict("ru")["message"] == (
        "'12,75' — не число: напишите 12.75 (десятичная точка, а не запятая)"
    )
    assert caught.value.to_dict("et")["message"] == (
        "'12,75' ei ole arv: kirjuta 12.75 (kümnendkohti eraldab punkt, mitte koma)"
    )


def test_error_snippet_and_caret() -> None:
    with pytest.raises(engine.UnknownFunction) as caught:
        engine.trace("a = 2\n\tb = sqrtt(a)")
    error = caught.value
    assert error.snippet == "\tb = sqrtt(a)"
    assert error.caret == "\t    ^^^^^"
    assert (error.line, error.column, error.end_line, error.end_column) == (2, 6, 2, 11)
    assert set(error.to_dict()) == {
        "type",
        "message",
        "line",
        "column",
        "end_line",
        "end_column",
        "snippet",
        "caret",
    }


def test_caret_at_end_of_input_points_past_the_last_character() -> None:
    with pytest.raises(engine.SyntaxError_) as caught:
        engine.trace("x = a *\n\n")
    assert caught.value.snippet == "x = a *"
    assert caught.value.caret == "       ^"


def test_nul_and_surrogates_are_not_in_the_snippet() -> None:
    with pytest.raises(engine.SyntaxError_) as caught:
        engine.trace("a + \ud800 + \x00")
    assert "\ud800" not in caught.value.snippet and "\x00" not in caught.value.snippet


POSTFIX = [
    ("a*b + c", ["a", "b", "(* a b)", "c", "(+ (* a b) c)"]),
    ("-2*a", ["-2", "a", "(* -2 a)"]),  # a folded literal, not 2 and (neg 2)
    ("a**2", ["a", "(** a 2)"]),  # a literal exponent is part of its node
    ("a ** -1", ["a", "(** a -1)"]),
    ("(2)**a", ["2", "a", "(** 2 a)"]),
    ("tanh(-a)", ["a", "(neg a)", "(tanh (neg a))"]),
    ("-x ** 2 / (x - 1)", ["x", "(** x 2)", "(neg (** x 2))", "x", "1", "(- x 1)",
                           "(/ (neg (** x 2)) (- x 1))"]),
]  # fmt: skip


@pytest.mark.parametrize(("source", "postfix"), POSTFIX)
def test_postfix_lists_the_nodes_the_graph_builds_in_post_order(
    source: str, postfix: list[str]
) -> None:
    (statement,) = parse(source)
    assert [str(expr) for expr in statement.postfix] == postfix
    assert [use.text for use in statement.names()] == [e.text for e in statement.expr.names()]
