"""One WebSocket of a class, from `hello` to goodbye: who it is, what it may do, and doing it.

Only a page that says the teacher's token may drive (view, mode, ask, reveal, lock, remove,
end); a student may answer and rename. A student the teacher removed is refused with its id,
and while the class is locked only students who joined before get in. What a client sends is
bounded: its size, its rate (a flood closes the socket), and a student's answers (a few at once,
then one every two seconds).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from typing import Any
from urllib.parse import urlsplit

from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.websockets import WebSocket, WebSocketDisconnect

from chainrule.app.api.graph_body import limits_of
from chainrule.app.http.errors import describe_validation_error
from chainrule.app.live_class.codes import clean_nickname, is_teacher, read_code, roster_id
from chainrule.app.live_class.hub import NOT_ALLOWED, Bucket, Client, Hub
from chainrule.app.live_class.protocol import (
    TEACHER_TYPES,
    Answer,
    Ask,
    End,
    Hello,
    Lock,
    Remove,
    Rename,
    Reveal,
    SetMode,
    SetView,
    client_message,
)
from chainrule.app.live_class.questions import BadQuestion, answer_key, board
from chainrule.app.live_class.store import StoreUnavailable
from chainrule.app.settings import AppSettings
from chainrule.engine import ProgramError
from chainrule.engine.i18n import text

logger = logging.getLogger("chainrule")

HELLO_TIMEOUT_S = 10.0
STUDENT_MESSAGE_BYTES = 4_096
NO_CLASS = 4404
FLOODED = 4429
TRY_AGAIN = 1013  # the store is away: the page reconnects (and says so meanwhile)


def teacher_message_bytes(settings: AppSettings) -> int:
    """The longest message a teacher may send: a view with the longest program (UTF-8)."""
    return settings.max_source_chars * 4 + 65_536


def error_message(lang: str, type_: str, key: str, **params: Any) -> str:
    body = {"type": type_, "message": text(lang, key, **params)}
    return json.dumps({"type": "error", "error": body}, ensure_ascii=False)


class Session:
    """A client that said hello: dispatches what it sends."""

    def __init__(self, hub: Hub, settings: AppSettings, code: str, client: Client) -> None:
        self.hub = hub
        self.store = hub.store
        self.settings = settings
        self.code = code
        self.client = client
        teacher = client.role == "teacher"
        self.messages = Bucket(400, 100) if teacher else Bucket(20, 5)
        self.answers = Bucket(5, 0.5)

    def say(self, type_: str, key: str, **params: Any) -> None:
        self.client.offer(error_message(self.client.lang, type_, key, **params))

    @property
    def max_bytes(self) -> int:
        if self.client.role == "teacher":
            return teacher_message_bytes(self.settings)
        return STUDENT_MESSAGE_BYTES

    async def handle(self, raw: str) -> bool:
        """Act on one message; False when the socket must close."""
        if not self.messages.take() or len(raw) > self.max_bytes:
            return False
        try:
            message = client_message.validate_json(raw)
        except ValidationError as error:
            problem = describe_validation_error(error.errors()[0], self.client.lang)
            self.say("BadMessage", "api.class.bad_message", problem=problem)
            return True
        if message.type in TEACHER_TYPES and self.client.role != "teacher":
            self.say("NotTeacher", "api.class.not_teacher")
            return True
        handler = getattr(self, f"_on_{message.type}", None)
        if handler is None:
            self.say("BadMessage", "api.class.hello_once")
            return True
        try:
            await handler(message)
        except (StoreUnavailable, OverflowError):  # refused, visibly: sent again when "back"
            self.say("StoreDown", "api.class.store_down")
        return True

    async def _write(self, changes: dict[str, str]) -> None:
        if await self.store.write(self.code, changes, self.settings.class_idle_expiry_s) is None:
            self.hub.ended(self.code)

    async def _on_view(self, message: SetView) -> None:
        if len(message.view.source) > self.settings.max_source_chars:
            self.say(
                "LimitExceeded", "api.class.source_too_long", limit=self.settings.max_source_chars
            )
            return
        await self._write({"view": message.view.model_dump_json(by_alias=True)})

    async def _on_mode(self, message: SetMode) -> None:
        await self._write({"mode": message.mode})

    async def _on_ask(self, message: Ask) -> None:
        fields = await self.store.read(self.code)
        if fields is None:
            self.hub.ended(self.code)
            return
        view = json.loads(fields["view"])
        try:
            key = await run_in_threadpool(
                answer_key,
                message,
                view["source"],
                view["values"],
                view["expandDerived"],
                limits_of(self.settings),
            )
        except ProgramError as error:
            self.say(
                error.type, "api.class.program_error", message=error.message_in(self.client.lang)
            )
            return
        except BadQuestion as error:
            self.say("BadQuestion", error.key, **error.params)
            return
        question = {
            "id": secrets.token_hex(4), "kind": message.kind, "node": message.node,
            "edge": message.edge, "tensor": message.tensor, "index": message.index,
            "label": message.label, "open": True, "truth": None,
        }  # fmt: skip
        await self._write({
            "question": json.dumps(question), "key": json.dumps(key),
            "board": "null", "open": question["id"],
        })  # fmt: skip

    async def _on_reveal(self, message: Reveal) -> None:
        fields = await self.store.read(self.code)
        question = json.loads(fields["question"]) if fields else None
        records = await self.store.close_question(self.code, question["id"]) if question else None
        if fields is None or question is None or records is None:
            self.say("NoQuestion", "api.class.no_question")
            return
        key = json.loads(fields["key"])
        answers = [(r["value"], r["name"]) for r in map(json.loads, records)]
        shown = {**question, "open": False, "truth": key["truth"]}
        board_json = json.dumps(board(key, question["id"], answers, message.names))
        await self._write({"question": json.dumps(shown), "board": board_json})

    async def _on_end(self, message: End) -> None:
        await self.store.end(self.code)

    async def _on_lock(self, message: Lock) -> None:
        await self._write({"locked": "1" if message.locked else ""})

    async def _on_remove(self, message: Remove) -> None:
        for student in await self.store.joined(self.code):
            if roster_id(self.code, student) == message.student:
                await self.store.remove(self.code, student)
                return
        self.say("NoStudent", "api.class.no_student")

    async def _on_answer(self, message: Answer) -> None:
        if not self.answers.take():
            self.say("RateLimited", "api.class.answer_rate")
            return
        record = json.dumps({"value": message.value, "name": self.client.name}, ensure_ascii=False)
        count = await self.store.add_answer(
            self.code, message.question, self.client.student, record
        )
        if count is None:
            self.say("QuestionClosed", "api.class.question_closed")
            return
        ack = {
            "type": "ack",
            "seq": message.seq,
            "question": message.question,
            "value": message.value,
        }
        self.client.offer(json.dumps(ack))

    async def _on_name(self, message: Rename) -> None:
        self.client.name = clean_nickname(message.name)
        await self.store.name(self.code, self.client.student, self.client.name)
        self.client.offer(
            json.dumps({"type": "named", "name": self.client.name}, ensure_ascii=False)
        )


async def receive_text(socket: WebSocket) -> str:
    """The next text message ("" for a binary one, which no message of ours is)."""
    message = await socket.receive()
    if message["type"] == "websocket.disconnect":
        raise WebSocketDisconnect(message.get("code", 1000))
    return message.get("text") or ""


async def _hello(socket: WebSocket) -> Hello | None:
    with contextlib.suppress(asyncio.TimeoutError, ValidationError, WebSocketDisconnect):
        raw = await asyncio.wait_for(receive_text(socket), HELLO_TIMEOUT_S)
        if len(raw) <= STUDENT_MESSAGE_BYTES:
            message = client_message.validate_json(raw)
            return message if isinstance(message, Hello) else None
    return None


async def _known(hub: Hub, code: str | None, fields: dict[str, str] | None, hello: Hello) -> bool:
    """Whether this page belongs to class `code`: the teacher's token, or a student's id that
    joined it before (a reconnection)."""
    if fields is None or code is None:
        return False
    if hello.role == "teacher":
        return is_teacher(hello.token, fields["token"])
    return hello.student is not None and await hub.store.has_joined(code, hello.student)


async def refuse(socket: WebSocket, close_code: int, message: str) -> None:
    with contextlib.suppress(Exception):
        await socket.send_text(message)
        await socket.close(close_code)


def bound_frames(socket: WebSocket, max_bytes: int) -> bool:
    """Make the server refuse any message of this socket longer than `max_bytes` from its
    header, before reading it (uvicorn's `websockets` protocols; it closes with 1009): the
    size a message announces is checked as its first bytes arrive, so a student's megabyte is
    never read or held. False where the server offers no such bound (the test client): there
    `Session.handle` still checks the length of what it read."""
    protocol = getattr(socket._receive, "__self__", None)  # uvicorn's protocol for this socket
    connection = getattr(protocol, "conn", None)  # websockets-sansio (uvicorn's default)
    if connection is not None and hasattr(connection, "max_message_size"):
        connection.max_message_size = max_bytes
        return True
    if protocol is not None and hasattr(protocol, "max_size"):  # websockets' legacy protocol
        protocol.max_size = max_bytes
        return True
    return False


def same_origin(socket: WebSocket) -> bool:
    """Whether the page that opened `socket` is one of this site's (its Origin's host and port
    are the Host it asked for). A client that is not a browser sends no Origin: no page of
    another site is behind it, and nothing it could reach is the browser's to lend."""
    origin = socket.headers.get("origin")
    if origin is None:
        return True
    return urlsplit(origin).netloc.lower() == socket.headers.get("host", "").lower()


async def serve(socket: WebSocket, code_text: str, hub: Hub, settings: AppSettings) -> None:
    """Run one class connection until either side closes it."""
    if not same_origin(socket):  # a page of another site: refused before the handshake (403)
        await socket.close(NOT_ALLOWED)
        return
    address = socket.client.host if socket.client else "unknown"
    if hub.knocks.hit(address) > 0:  # a flood of sockets from one address: a handshake each
        await socket.close(FLOODED)
        return
    bound_frames(socket, STUDENT_MESSAGE_BYTES)  # until the teacher's token is shown
    await socket.accept()
    hello = await _hello(socket)
    if hello is None:
        await refuse(socket, 1008, error_message("en", "BadMessage", "api.class.hello_first"))
        return
    try:
        await _serve(socket, code_text, hello, hub, settings)
    except StoreUnavailable:  # before the page joined: it says so, and tries again
        error = error_message(hello.lang, "StoreDown", "api.class.store_down")
        await refuse(socket, TRY_AGAIN, error)


async def _serve(
    socket: WebSocket, code_text: str, hello: Hello, hub: Hub, settings: AppSettings
) -> None:
    lang = hello.lang
    code = read_code(code_text)
    fields = await hub.store.read(code) if code else None
    address = socket.client.host if socket.client else "unknown"
    limit = settings.class_join_guesses_per_minute
    if await hub.store.guessed_out(address, limit) and not await _known(hub, code, fields, hello):
        # Past the limit, a running class answers as an unknown code does (no oracle); a page
        # that proves it belongs (the teacher's token, a student's id that joined) goes on.
        error = error_message(lang, "RateLimited", "api.class.too_many_guesses")
        await refuse(socket, NO_CLASS, error)
        return
    if fields is None:
        allowed = await hub.store.guess(address, limit)
        key = "api.class.no_class" if allowed else "api.class.too_many_guesses"
        kind = "NoClass" if allowed else "RateLimited"
        await refuse(socket, NO_CLASS, error_message(lang, kind, key, code=code_text[:16]))
        return
    assert code is not None
    if hello.role == "teacher" and not is_teacher(hello.token, fields["token"]):
        await refuse(
            socket, NOT_ALLOWED, error_message(lang, "NotTeacher", "api.class.not_teacher")
        )
        return
    if hello.role == "teacher":  # a program is larger than a student's answer
        bound_frames(socket, teacher_message_bytes(settings))
    # A student is who the server said it was: an id it gave at the first join, said again on
    # reconnection; any other id (made up, or of another class) gets a new one.
    known = hello.student is not None and await hub.store.has_joined(code, hello.student)
    student = hello.student if known and hello.student else secrets.token_urlsafe(16)
    maximum = int(fields["max"])
    if hello.role == "student" and hello.student and not known:
        if await hub.store.is_removed(code, hello.student):  # the same tab, back: refused
            await refuse(socket, NOT_ALLOWED, error_message(lang, "Removed", "api.class.removed"))
            return
    if hello.role == "student" and not known and fields.get("locked"):
        await refuse(socket, NOT_ALLOWED, error_message(lang, "ClassLocked", "api.class.locked"))
        return
    if hello.role == "student":
        per_address = settings.class_max_students_per_address
        admission = await hub.store.join(code, student, maximum, address, per_address)
        if admission == "full":
            error = error_message(lang, "ClassFull", "api.class.full", max=maximum)
            await refuse(socket, NOT_ALLOWED, error)
            return
        if admission == "address":
            error = error_message(lang, "ClassFull", "api.class.address_full", max=per_address)
            await refuse(socket, NOT_ALLOWED, error)
            return
    mine = None
    if hello.role == "student" and fields.get("open"):
        record = await hub.store.answer_of(code, fields["open"], student)
        if record is not None:
            mine = {"question": fields["open"], "value": json.loads(record)["value"]}
    client = Client(socket, hello.role, student, clean_nickname(hello.name), lang, hub.queue_size)
    if hello.role == "student":
        await hub.store.name(code, student, client.name)
    if hello.role == "teacher":  # this page drives now: any other teacher page is told so
        client.seat = secrets.token_hex(8)
        expiry = settings.class_idle_expiry_s
        version = await hub.store.write(code, {"teacher": client.seat}, expiry)
        if version is not None:
            fields = {**fields, "teacher": client.seat, "version": str(version)}
    session = Session(hub, settings, code, client)
    welcome: dict[str, Any] = {
        "type": "welcome", "role": hello.role, "code": code, "student": student,
        "name": client.name, "max": maximum, "answer": mine,
    }  # fmt: skip
    client.offer(json.dumps(welcome, ensure_ascii=False))
    hub.attach(code, client, fields)
    try:
        while not client.dropped:
            raw = await receive_text(socket)
            if not await session.handle(raw):
                client.drop(FLOODED)
    except (WebSocketDisconnect, RuntimeError):
        pass  # the page went away (or was dropped and closed)
    except Exception:  # the store failed (Redis gone): the page reconnects and tries again
        logger.exception("class %s: connection failed", code)
        client.drop(1011)
    finally:
        hub.detach(code, client)
        await client.stop()
        if hello.role == "student":
            with contextlib.suppress(Exception):
                await hub.store.leave(code, student)
