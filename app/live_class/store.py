"""Where a class's state lives, behind one interface: this process (`MemoryStore`, the default)
or Redis (`redis_store.RedisStore`, with `CHAINRULE_REDIS_URL`), shared by every worker.

A class is a handful of text fields, each written whole: `view`, `mode`, `question` (what
students see of the open or last question), `key` (its right value and known mistakes, kept
from students until the reveal), `board`, `open` (the id of the question taking answers, or ""),
`version` (bumped by every write), `token` (the teacher token's hash) and `max` (the student cap).
A write tells every process "class X changed" (`Listener.changed`); the process reads the fields
and sends its own students the whole state, so a lost notice costs nothing but a moment.
`locked` ("1" or "") says whether new students may join (the teacher's lock).
Answers are kept per question, one per student; an answer is stored only while its question is
open, and closing a question returns exactly the answers stored before it closed.

Each admitted student has a nickname (the roster the teacher sees); a student the teacher
removed is remembered (`removed`): its id no longer joins, its answer to the open question is
taken back, and every process hears `Listener.removed` and closes that student's sockets.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal, Protocol

from chainrule.app.http.ratelimit import SlidingWindowLimiter

# A student counts as present this long after their process last said so (a process that dies
# stops saying so; its students reconnect elsewhere and are counted there).
PRESENCE_S = 30.0


Admission = Literal["joined", "full", "address"]


def by_name(entry: tuple[str, str]) -> tuple[str, str]:
    """A roster's order: by nickname (case folded; the unnamed last), then id."""
    student, name = entry
    return (name.casefold() or "\uffff", student)


class StoreUnavailable(Exception):
    """The store cannot be reached (Redis restarting, or away): nothing was done; try again."""


class Listener(Protocol):
    """The process's hub: told when a class changes, a question's count moves or a class ends,
    and when the store is lost and back (Redis)."""

    def changed(self, code: str) -> None: ...

    def counted(self, code: str, question: str, count: int) -> None: ...

    def ended(self, code: str) -> None: ...

    def removed(self, code: str, student: str) -> None:
        """The teacher removed `student`: its sockets in this process are told, and closed."""

    def codes(self) -> list[str]:
        """The classes this process has connections to."""

    def store_lost(self) -> None:
        """The store cannot be reached: every page is told, nothing is dropped in silence."""

    def store_back(self) -> None:
        """The store answers again (every class it serves is re-read next)."""


class ClassStore(Protocol):
    async def create(self, code: str, fields: dict[str, str], ttl_s: int) -> bool:
        """Store a new class; False if `code` is taken."""

    async def read(self, code: str) -> dict[str, str] | None:
        """Every field of the class, or None if there is none (never was, ended, expired)."""

    async def alive(self, code: str) -> bool:
        """Whether the class is still there (not ended, expired or lost)."""

    async def write(self, code: str, changes: dict[str, str], ttl_s: int) -> int | None:
        """Set fields, bump the version, keep the class `ttl_s` more; the new version (None if
        the class is gone). Every process hears `changed(code)`."""

    async def end(self, code: str) -> None: ...

    async def add_answer(self, code: str, question: str, student: str, record: str) -> int | None:
        """Store `student`'s answer if `question` is open (replacing an earlier one): the count
        of answers, or None when the question is not open."""

    async def answer_of(self, code: str, question: str, student: str) -> str | None: ...

    async def close_question(self, code: str, question: str) -> list[str] | None:
        """Stop taking answers to `question`: every answer stored, or None if it was not open."""

    async def join(
        self, code: str, student: str, cap: int, address: str = "", per_address: int = 0
    ) -> Admission:
        """Count `student` present unless `cap` others are ("full"; a student already present
        is always let back in); a student new to the class is refused ("address") when
        `per_address` students (0: no limit) already joined it from `address`."""

    async def leave(self, code: str, student: str) -> None: ...

    async def touch(self, code: str, students: Iterable[str]) -> None:
        """These students are still connected to this process."""

    async def present(self, code: str) -> int: ...

    async def guess(self, address: str, per_minute: int) -> bool:
        """Count a guess of an unknown code from `address`; False beyond the limit."""

    async def creation(self, address: str, per_minute: int) -> bool:
        """Count a class started from `address`; False beyond `per_minute`."""

    async def guessed_out(self, address: str, per_minute: int) -> bool:
        """Whether `address` has used up its guesses this minute (nothing counted): from then
        on a running class and an unknown code get the same answer, so the limit is no oracle."""

    async def has_joined(self, code: str, student: str) -> bool:
        """Whether `student` (a page's own id) joined this class before (a reconnection)."""

    async def name(self, code: str, student: str, name: str) -> None:
        """`student`'s nickname, as the roster shows it."""

    async def roster(self, code: str) -> list[tuple[str, str]]:
        """The students present, as (id, nickname), by nickname then id."""

    async def joined(self, code: str) -> list[str]:
        """Every student id admitted to the class and not removed."""

    async def remove(self, code: str, student: str) -> None:
        """Remove `student`: no longer joined or present, its answer to the open question
        taken back (the count said again), and every process told (`Listener.removed`)."""

    async def is_removed(self, code: str, student: str) -> bool: ...

    async def start(self, listener: Listener) -> None: ...

    async def close(self) -> None: ...


@dataclass
class _Class:
    fields: dict[str, str]
    expires_at: float
    answers: dict[str, dict[str, str]] = field(default_factory=dict)  # question → student → record
    present: dict[str, int] = field(default_factory=dict)  # student → connections
    joined: set[str] = field(default_factory=set)  # every student ever admitted
    by_address: dict[str, int] = field(default_factory=dict)  # address → students joined from it
    names: dict[str, str] = field(default_factory=dict)  # student → nickname
    removed: set[str] = field(default_factory=set)  # students the teacher removed


class MemoryStore:
    """Classes in this process only: one process serves them (`make run`, one worker)."""

    def __init__(self, max_classes: int = 10_000, clock=time.monotonic) -> None:
        self.max_classes = max_classes
        self.clock = clock
        self._classes: dict[str, _Class] = {}
        self._listener: Listener | None = None
        self._guesses: dict[int, SlidingWindowLimiter] = {}
        self._creations: dict[int, SlidingWindowLimiter] = {}

    async def start(self, listener: Listener) -> None:
        self._listener = listener

    async def close(self) -> None:
        self._classes.clear()

    def _live(self, code: str) -> _Class | None:
        room = self._classes.get(code)
        if room is not None and room.expires_at <= self.clock():
            del self._classes[code]
            return None
        return room

    def sweep(self) -> None:
        """Forget expired classes."""
        for code in [c for c, room in self._classes.items() if room.expires_at <= self.clock()]:
            del self._classes[code]

    async def create(self, code: str, fields: dict[str, str], ttl_s: int) -> bool:
        if self._live(code) is not None:
            return False
        if len(self._classes) >= self.max_classes:
            self.sweep()
            if len(self._classes) >= self.max_classes:
                raise OverflowError("too many classes")
        self._classes[code] = _Class({**fields, "version": "1"}, self.clock() + ttl_s)
        return True

    async def read(self, code: str) -> dict[str, str] | None:
        room = self._live(code)
        return dict(room.fields) if room is not None else None

    async def alive(self, code: str) -> bool:
        return self._live(code) is not None

    async def write(self, code: str, changes: dict[str, str], ttl_s: int) -> int | None:
        room = self._live(code)
        if room is None:
            return None
        room.fields.update(changes)
        version = int(room.fields["version"]) + 1
        room.fields["version"] = str(version)
        room.expires_at = self.clock() + ttl_s
        if self._listener is not None:
            self._listener.changed(code)
        return version

    async def end(self, code: str) -> None:
        if self._classes.pop(code, None) is not None and self._listener is not None:
            self._listener.ended(code)

    async def add_answer(self, code: str, question: str, student: str, record: str) -> int | None:
        room = self._live(code)
        if room is None or not question or room.fields.get("open") != question:
            return None
        answers = room.answers.setdefault(question, {})
        answers[student] = record
        if self._listener is not None:
            self._listener.counted(code, question, len(answers))
        return len(answers)

    async def answer_of(self, code: str, question: str, student: str) -> str | None:
        room = self._live(code)
        return room.answers.get(question, {}).get(student) if room is not None else None

    async def close_question(self, code: str, question: str) -> list[str] | None:
        room = self._live(code)
        if room is None or not question or room.fields.get("open") != question:
            return None
        room.fields["open"] = ""
        return list(room.answers.get(question, {}).values())

    async def join(
        self, code: str, student: str, cap: int, address: str = "", per_address: int = 0
    ) -> Admission:
        room = self._live(code)
        if room is None:
            return "full"
        if student not in room.present and len(room.present) >= cap:
            return "full"
        if student not in room.joined and per_address:
            if room.by_address.get(address, 0) >= per_address:
                return "address"
            room.by_address[address] = room.by_address.get(address, 0) + 1
        room.present[student] = room.present.get(student, 0) + 1
        room.joined.add(student)
        return "joined"

    async def has_joined(self, code: str, student: str) -> bool:
        room = self._live(code)
        return room is not None and student in room.joined

    async def name(self, code: str, student: str, name: str) -> None:
        room = self._live(code)
        if room is not None and student in room.joined:
            room.names[student] = name

    async def roster(self, code: str) -> list[tuple[str, str]]:
        room = self._live(code)
        if room is None:
            return []
        return sorted(((s, room.names.get(s, "")) for s in room.present), key=by_name)

    async def joined(self, code: str) -> list[str]:
        room = self._live(code)
        return list(room.joined) if room is not None else []

    async def remove(self, code: str, student: str) -> None:
        room = self._live(code)
        if room is None:
            return
        room.removed.add(student)
        room.joined.discard(student)
        room.present.pop(student, None)
        room.names.pop(student, None)
        question = room.fields.get("open", "")
        answers = room.answers.get(question, {})
        if self._listener is not None:
            if answers.pop(student, None) is not None:
                self._listener.counted(code, question, len(answers))
            self._listener.removed(code, student)

    async def is_removed(self, code: str, student: str) -> bool:
        room = self._live(code)
        return room is not None and student in room.removed

    async def leave(self, code: str, student: str) -> None:
        room = self._classes.get(code)
        if room is None or student not in room.present:
            return
        room.present[student] -= 1
        if room.present[student] <= 0:
            del room.present[student]

    async def touch(self, code: str, students: Iterable[str]) -> None:
        return None  # presence here is the connections themselves

    async def present(self, code: str) -> int:
        room = self._live(code)
        return len(room.present) if room is not None else 0

    async def guess(self, address: str, per_minute: int) -> bool:
        limiter = self._guesses.get(per_minute)
        if limiter is None:
            limiter = self._guesses[per_minute] = SlidingWindowLimiter(per_minute, 60.0)
        return limiter.hit(address) <= 0

    async def creation(self, address: str, per_minute: int) -> bool:
        limiter = self._creations.get(per_minute)
        if limiter is None:
            limiter = self._creations[per_minute] = SlidingWindowLimiter(per_minute, 60.0)
        return limiter.hit(address) <= 0

    async def guessed_out(self, address: str, per_minute: int) -> bool:
        limiter = self._guesses.get(per_minute)
        return limiter is not None and limiter.spent(address)
