"""One error hierarchy for bad programs: every error knows where it is and how to show it."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property
from typing import Any

from .i18n import DEFAULT_LANG, render, text


class ProgramError(Exception):
    """A program the engine refuses, with the position of the offending text.

    `line`/`column` (and `end_line`/`end_column`) are 1-based; `end_column` is exclusive.
    `snippet` is the source line of `line` (a window of it around the error when the line is
    long); `caret` is spaces then `^` under the offending text. Errors that are not about the
    source text (a bad request value or visit order) have `line`, `column` and the end fields
    set to None and empty `snippet`/`caret`.

    `message` is English; the engine raises it as a Message (engine/i18n.py), so
    `message_in(lang)` says it in any of the catalogue's languages.
    """

    type = "ProgramError"

    def __init__(
        self,
        message: str,
        source: str | None = None,
        start: int | None = None,
        end: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.line: int | None = None
        self.column: int | None = None
        self.end_line: int | None = None
        self.end_column: int | None = None
        self.snippet = ""
        self.caret = ""
        if source is not None and start is not None:
            self._locate(source, start, start + 1 if end is None else end)

    def _locate(self, source: str, start: int, end: int) -> None:
        start = max(0, min(start, len(source)))
        end = max(start + 1, end)
        self._offsets = (start, end)
        lines = LineIndex(source)
        self.line, self.column = lines.position(start)
        end_offset = min(end, len(source) + 1)
        self.end_line, self.end_column = lines.position(end_offset)
        self.snippet, self.caret = snippet_and_caret(source, start, end, lines)

    def shown_in(self, source: str) -> None:
        """Show the error in `source`, a text of the same length and lines as the one it was
        found in (the program as typed, where the reader read it with its copy leftovers
        blanked): the snippet is what the user typed, the position the same."""
        offsets = getattr(self, "_offsets", None)
        if offsets is not None and len(source) >= offsets[0]:
            self._locate(source, *offsets)

    def message_in(self, lang: str) -> str:
        """The message in `lang` (`en`, `ru`, `et`)."""
        return render(self.message, lang)

    def to_dict(self, lang: str = DEFAULT_LANG) -> dict[str, Any]:
        """The API's `error` object: type, message (in `lang`), position, snippet and caret."""
        return {
            "type": self.type,
            "message": self.message_in(lang),
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "snippet": self.snippet,
            "caret": self.caret,
        }


@contextmanager
def placed_in_tracebacks(lang: str = DEFAULT_LANG) -> Iterator[None]:
    """Re-raise a ProgramError with where it is as a note, which Python prints under the
    exception's message (`chainrule.trace("a +* b")` in a notebook or a script): the line and
    column, the line itself and the caret, as the page and `chainrule render` show them; in
    `lang` (the message, English in the exception's own line, said again in it)."""
    try:
        yield
    except ProgramError as error:
        if error.line is not None and not getattr(error, "__notes__", None):
            where = text(lang, "ui.error.where", line=error.line, column=error.column)
            said = "" if lang == DEFAULT_LANG else f"{error.message_in(lang)}\n"
            error.add_note(f"{said}{where}:\n  {error.snippet}\n  {error.caret}")
        raise


class LineIndex:
    """The offsets where the lines of `source` start, found in one pass when first asked for
    (a build makes one for its warnings, which most programs have none of): the position of
    any offset is then a binary search, not a count from the start of the source."""

    def __init__(self, source: str) -> None:
        self.source = source

    @cached_property
    def starts(self) -> list[int]:
        starts = [0]
        find = self.source.find
        newline = find("\n")
        while newline != -1:
            starts.append(newline + 1)
            newline = find("\n", newline + 1)
        return starts

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of an offset (the offset just past the source included)."""
        line = bisect_right(self.starts, offset)
        return line, offset - self.starts[line - 1] + 1

    def line_bounds(self, offset: int) -> tuple[int, int]:
        """Start and end offsets of the line holding `offset`, without its `\n` or `\r\n`."""
        line = bisect_right(self.starts, offset)
        start = self.starts[line - 1]
        end = self.starts[line] - 1 if line < len(self.starts) else len(self.source)
        if end > start and self.source[end - 1] == "\r":
            end -= 1
        return start, end


SNIPPET_WIDTH = 100  # at most this many characters of a long line, plus a "…" at each cut
SNIPPET_BEFORE = 40  # of which this many (at most) come before the error


def snippet_and_caret(source: str, start: int, end: int, lines: LineIndex) -> tuple[str, str]:
    """The line holding `start` (a window of SNIPPET_WIDTH characters around `start` when the
    line is longer, "…" marking each cut) and a caret line with `^` under `source[start:end]`."""
    line_start, line_end = lines.line_bounds(start)
    shown_start, shown_end = line_start, line_end
    if line_end - line_start > SNIPPET_WIDTH:
        shown_start = max(line_start, start - SNIPPET_BEFORE)
        shown_end = min(line_end, shown_start + SNIPPET_WIDTH)
        shown_start = max(line_start, shown_end - SNIPPET_WIDTH)
    before = "…" if shown_start > line_start else ""
    after = "…" if shown_end < line_end else ""
    snippet = before + _printable(source[shown_start:shown_end]) + after
    prefix = " " * len(before) + "".join(
        ch if ch == "\t" else " " for ch in source[shown_start:start]
    )
    width = max(1, min(end, shown_end) - start)
    return snippet, prefix + "^" * width


# Other whitespace the lexer skips shows as a space, so a snippet never holds a carriage return.
_SHOWN = {"\x00": "\ufffd", "\r": " ", "\v": " ", "\f": " "}


def _printable(text: str) -> str:
    """Replace NUL and lone surrogates (which JSON encoders reject) by U+FFFD and whitespace
    control characters by a space, keeping the width."""
    return "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else _SHOWN.get(ch, ch) for ch in text)


QUOTE_MAX = 40


def quoted(text: str) -> str:
    """A piece of the program for a message, at most QUOTE_MAX characters (cut with "…"), so
    a 90,000-character name does not make a 90,000-character message."""
    return text if len(text) <= QUOTE_MAX else text[: QUOTE_MAX - 1] + "…"


class SyntaxError_(ProgramError):  # noqa: N801 - the trailing underscore avoids the builtin
    """Text that is not part of the language."""

    type = "SyntaxError"


class UnknownFunction(ProgramError):
    """A call to something that is not one of the allowed functions."""

    type = "UnknownFunction"


class ArgumentCount(ProgramError):
    """A function called with the wrong number of arguments."""

    type = "ArgumentCount"


class BadFunction(ProgramError):
    """A function definition chainrule refuses: a name taken by a built-in or already
    defined, a repeated parameter, a body using a name that is no parameter, or calling itself
    or a function defined below it (recursion)."""

    type = "BadFunction"


class UseBeforeAssign(ProgramError):
    """A name used in a statement before the statement that assigns it."""

    type = "UseBeforeAssign"


class AssignedTwice(ProgramError):
    """A name assigned by two statements."""

    type = "AssignedTwice"


class NeedsRunning(ProgramError):
    """Python that must run before its graph can be read (a class, a function definition, a
    loop, a list, a random number, a call into a library): chainrule reads straight-line code as
    data and never runs it. A client that can run Python (the notebook's kernel, the page's
    sandbox) runs such code and traces the resulting Value graph instead."""

    type = "NeedsRunning"


class TensorProgram(ProgramError):
    """A tensor program (docs/tensors.md) where only scalar programs are read: `POST /api/graph`
    and `engine.tensor_program.trace_tensors` read it."""

    type = "TensorProgram"


class LimitExceeded(ProgramError):
    """The program is larger or deeper than the limits the caller set."""

    type = "LimitExceeded"


class BadValue(ProgramError):
    """A leaf value in the request that is not a finite number."""

    type = "BadValue"


class BadTraining(ProgramError):
    """Gradient descent settings that cannot run: parameters that are not leaves, a learning
    rate that is not a positive finite number, too many steps."""

    type = "BadTraining"


class BadLandscape(ProgramError):
    """A loss landscape that cannot be drawn: not two distinct leaves, a range that is not a
    finite interval, too many points or too much work for one request."""

    type = "BadLandscape"


class BadOrder(ProgramError):
    """A visit order naming unknown or repeated node ids."""

    type = "BadOrder"


class BadTarget(ProgramError):
    """A target that names no node, names a constant, or comes with a teaching variant."""

    type = "BadTarget"


class BadWrt(ProgramError):
    """Forward mode without a `wrt`, with a `wrt` that names no leaf, or with another option
    it does not go with (a teaching variant, a target)."""

    type = "BadWrt"


class BadLeaf(ProgramError):
    """The node `POST /api/paths` starts from names no node, or names a constant."""

    type = "BadLeaf"
