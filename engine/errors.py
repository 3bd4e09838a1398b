"""One error hierarchy for bad programs: every error knows where it is and how to show it."""

from __future__ import annotations

from typing import Any


class ProgramError(Exception):
    """A program the engine refuses, with the position of the offending text.

    `line`/`column` (and `end_line`/`end_column`) are 1-based; `end_column` is exclusive.
    `snippet` is the source line of `line`; `caret` is spaces then `^` under the offending
    text. Errors that are not about the source text (a bad request value or visit order) have
    `line`, `column` and the end fields set to None and empty `snippet`/`caret`.
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
        line_start = source.rfind("\n", 0, start) + 1
        line_end = source.find("\n", start)
        if line_end == -1:
            line_end = len(source)
        self.line = source.count("\n", 0, start) + 1
        self.column = start - line_start + 1
        end_offset = min(end, len(source) + 1)
        self.end_line = source.count("\n", 0, min(end_offset, len(source))) + 1
        end_line_start = source.rfind("\n", 0, min(end_offset, len(source))) + 1
        self.end_column = end_offset - end_line_start + 1
        snippet = _printable(source[line_start:line_end])
        self.snippet = snippet
        width = max(1, min(end, line_end) - start) if end <= line_end else max(1, line_end - start)
        prefix = "".join(ch if ch == "\t" else " " for ch in snippet[: start - line_start])
        self.caret = prefix + "^" * width

    def to_dict(self) -> dict[str, Any]:
        """The API's `error` object: type, message, position, snippet and caret."""
        return {
            "type": self.type,
            "message": self.message,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "snippet": self.snippet,
            "caret": self.caret,
        }


def _printable(text: str) -> str:
    """Replace NUL and lone surrogates (which JSON encoders reject) by U+FFFD, keeping width."""
    return "".join("\ufffd" if ch == "\x00" or "\ud800" <= ch <= "\udfff" else ch for ch in text)


class SyntaxError_(ProgramError):  # noqa: N801 - the trailing underscore avoids the builtin
    """Text that is not part of the language."""

    type = "SyntaxError"


class UnknownFunction(ProgramError):
    """A call to something that is not one of the allowed functions."""

    type = "UnknownFunction"


class ArgumentCount(ProgramError):
    """A function called with the wrong number of arguments."""

    type = "ArgumentCount"


class UseBeforeAssign(ProgramError):
    """A name used in a statement before the statement that assigns it."""

    type = "UseBeforeAssign"


class AssignedTwice(ProgramError):
    """A name assigned by two statements."""

    type = "AssignedTwice"


class LimitExceeded(ProgramError):
    """The program is larger or deeper than the limits the caller set."""

    type = "LimitExceeded"


class BadValue(ProgramError):
    """A leaf value in the request that is not a finite number."""

    type = "BadValue"


class BadOrder(ProgramError):
    """A visit order naming unknown or repeated node ids."""

    type = "BadOrder"
