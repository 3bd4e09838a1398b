"""Copy leftovers: what comes along when code is copied out of a notebook, an interactive session
or a web page (`>>> ` prompts and the session's output, `%` magics, `!pip` lines, non-breaking
spaces, a byte-order mark), read as blanks before the program is read.

Every change keeps the text's length and its line breaks, so every offset, line and column the
reader reports is one of the program as it was typed (the page underlines the column it gets)."""

from __future__ import annotations

import re
from typing import Any

from .errors import LineIndex
from .i18n import Message, msg

SHOWN_MAX = 60  # a skipped line is quoted in its note up to this many characters

# Spaces a web page writes that Python does not read as blanks: no-break, figure, narrow no-break.
_NO_BREAK_SPACES = "\u00a0\u2007\u202f"
_BOM = "\ufeff"
# A prompt of an interactive session: Python's `>>> ` and `... `, IPython's `In [3]: ` and
# `   ...: ` (the prompt alone on a line, for a blank line of the session, too).
_PROMPT = re.compile(r"[ \t]*(?:>>>|\.\.\.:?|In \[\d*\]:)(?: |\r?$)", re.ASCII)
_SESSION = re.compile(r"^[ \t]*(?:>>>|In \[\d*\]:)(?: |\r?$)", re.MULTILINE | re.ASCII)
_LINE = re.compile(r"^[^\n]*", re.MULTILINE)
# A notebook's `%matplotlib inline`, `%%time`, and shell commands such as `!pip install micrograd`.
_COMMAND = re.compile(r"^[ \t]*(?:(?P<magic>%)|!)[^\n]*", re.MULTILINE)


def shown(text: str) -> str:
    """A line of code quoted in a note: stripped, at most SHOWN_MAX characters."""
    text = text.strip()
    return text if len(text) <= SHOWN_MAX else text[: SHOWN_MAX - 1] + "…"


def line_note(kind: str, message: str, line: int, column: int) -> dict[str, Any]:
    """A program-level warning of `kind` about `line` (its message says the line)."""
    return {
        "type": kind,
        "message": msg("warning.on_line", line=line, message=message),
        "line": line,
        "column": column,
    }


class _Notes(list):
    """The notes of one reading, each about a line of `source` (which keeps its lines and
    offsets through every change); the lines are indexed once, on the first note."""

    def __init__(self, source: str) -> None:
        super().__init__()
        self.source = source
        self._lines: LineIndex | None = None

    def add(self, kind: str, message: Message, offset: int) -> None:
        """A warning of `kind` about the line holding `offset`, with its line and column."""
        if self._lines is None:
            self._lines = LineIndex(self.source)
        self.append(line_note(kind, message, *self._lines.position(offset)))


def clean(source: str) -> tuple[str, list[dict[str, Any]]]:
    """`source` with its copy leftovers blanked (same length, same lines) and a note for each:
    one per kind of normalised character or prompt, one per skipped line (a magic, a shell
    command, a line of a session's output). CRLF line endings need no change: the reader reads
    them as line ends."""
    notes = _Notes(source)
    for chars, key in ((_BOM, "warning.pasted.bom"), (_NO_BREAK_SPACES, "warning.pasted.nbsp")):
        first = min((i for i in map(source.find, chars) if i != -1), default=-1)
        if first != -1:
            notes.add("pasted", msg(key), first)
            for ch in chars:
                source = source.replace(ch, " ")
    session = _SESSION.search(source)
    if session is not None:
        prompt = session.group()
        notes.add("pasted", msg("warning.pasted.prompts"), session.end() - len(prompt.lstrip()))
        source = _LINE.sub(lambda line: _session_line(line, notes), source)
    if "%" in source or "!" in source:
        source = _COMMAND.sub(lambda line: _command_line(line, notes), source)
    return source, list(notes)


def _blank(text: str) -> str:
    """`text` as blanks of the same length (a tab stays a tab, so columns stay put)."""
    return "".join("\t" if ch == "\t" else " " for ch in text)


def _session_line(line: re.Match[str], notes: _Notes) -> str:
    """A line of an interactive session: its prompt blanked; a line with no prompt is the
    session's output (`Value(data=6.0)`), skipped with a note."""
    text = line.group()
    prompt = _PROMPT.match(text)
    if prompt is not None:
        return _blank(prompt.group()) + text[prompt.end() :]
    if not text.strip() or text.lstrip().startswith(("%", "!")):
        return text  # a blank line, or a command (`%time`) said as such next
    start = line.start() + len(text) - len(text.lstrip(" \t"))
    notes.add("skipped", msg("warning.skipped.output", text=shown(text)), start)
    return _blank(text)


def _command_line(line: re.Match[str], notes: _Notes) -> str:
    """A notebook's magic (`%matplotlib inline`) or shell command (`!pip install …`): skipped
    with a note."""
    text = line.group()
    kind = "magic" if line.group("magic") else "shell"
    start = line.start() + len(text) - len(text.lstrip(" \t"))
    notes.add("skipped", msg(f"warning.skipped.{kind}", text=shown(text)), start)
    return _blank(text)
