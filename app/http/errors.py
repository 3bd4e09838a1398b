"""One JSON error shape for everything: `{"error": {type, message, line, column, …}}`."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException
from starlette.responses import Response

from chainrule.app.api.language import lang_of
from chainrule.app.api.schemas import LONE_SURROGATE
from chainrule.app.http.responses import JSONBytes
from chainrule.engine import ProgramError
from chainrule.engine.errors import quoted
from chainrule.engine.i18n import DEFAULT_LANG, Count, msg, render, text

# The method a request was sent with, where app.middleware.HeadAsGet answers a HEAD as a GET.
ASKED_METHOD = "chainrule.asked_method"
HTTP_ERROR_TYPES = {
    400: "BadRequest",
    404: "NotFound",
    405: "MethodNotAllowed",
    413: "BodyTooLarge",
    422: "InvalidRequest",
    503: "Unavailable",
}


class ApiError(Exception):
    """An error the API reports as is, with its status (e.g. an export too large to draw); its
    message a Message, said in the request's language."""

    def __init__(
        self, status_code: int, type_: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.type = type_
        self.message = message
        self.headers = headers  # e.g. Retry-After on a 503 Busy


def error_body(type_: str, message: str, **position: Any) -> dict[str, Any]:
    """The error object; without a position, line/column are null and snippet/caret empty
    (as the engine's own errors that are not about the source text)."""
    fields = {
        "line": None,
        "column": None,
        "end_line": None,
        "end_column": None,
        "snippet": "",
        "caret": "",
        **position,
    }
    return {"error": {"type": type_, "message": message, **fields}}


def error_response(status_code: int, body: dict[str, Any]) -> JSONBytes:
    return JSONBytes(body, status_code=status_code)


# pydantic's error types that the catalogue says in other languages (`api.invalid.<type>`); in
# English, and for any other type, a message is pydantic's own.
_VALIDATION_TYPES = frozenset(
    (
        "missing",
        "extra_forbidden",
        "string_type",
        "float_type",
        "float_parsing",
        "int_type",
        "int_parsing",
        "int_from_float",
        "bool_type",
        "bool_parsing",
        "list_type",
        "dict_type",
        "literal_error",
    )
)
_QUOTED = re.compile(r"'[^']*'")


def _problem(error: dict[str, Any], lang: str) -> str:
    """What pydantic's error says is wrong, in `lang`."""
    english = error.get("msg", "invalid request")
    kind = error.get("type", "")
    if lang == DEFAULT_LANG:
        return english
    if kind == "literal_error":
        choices = ", ".join(_QUOTED.findall(str(error.get("ctx", {}).get("expected", ""))))
        return text(lang, "api.invalid.literal_error", choices=choices)
    if kind == "value_error" and str(error.get("ctx", {}).get("error")) == LONE_SURROGATE:
        return text(lang, "api.invalid.lone_surrogate")
    if kind in _VALIDATION_TYPES:
        return text(lang, f"api.invalid.{kind}")
    return english


def describe_validation_error(error: dict[str, Any], lang: str = DEFAULT_LANG) -> str:
    """`values.a: Input should be a valid number` from one of pydantic's error dicts, in
    `lang` (the field's place is the API's, never translated)."""
    location = list(error.get("loc", ()))
    if location[:1] == ["body"]:
        location = location[1:]
    # A field's name is the client's text (an unknown field may be named by 60 KB): cut it.
    where = ".".join(quoted(str(part)) for part in location)
    problem = _problem(error, lang)
    return f"{where}: {problem}" if where else text(lang, "api.invalid.body", problem=problem)


class MalformedBody(HTTPException):
    """A request body that is not a JSON object we can read: a 422 `InvalidRequest` that says
    what is wrong (FastAPI's own parser answers 400 "There was an error parsing the body"); its
    detail a Message."""

    def __init__(self, message: str) -> None:
        super().__init__(422, message)


EXAMPLE_BODY = '{"source": "a * b"}'
# The reasons of Python's JSON parser (json.JSONDecodeError.msg) that the catalogue says.
_JSON_REASONS = {
    "Expecting value": "api.json.expecting_value",
    "Expecting property name enclosed in double quotes": "api.json.expecting_property_name",
    "Expecting ',' delimiter": "api.json.expecting_comma",
    "Expecting ':' delimiter": "api.json.expecting_colon",
    "Extra data": "api.json.extra_data",
    "Unterminated string starting at": "api.json.unterminated_string",
    "Invalid control character at": "api.json.control_character",
    "Invalid \\escape": "api.json.invalid_escape",
    "Invalid \\uXXXX escape": "api.json.invalid_unicode_escape",
}
# And of the UTF-8 decoder (UnicodeDecodeError.reason).
_UTF8_REASONS = {
    "invalid start byte": "api.utf8.invalid_start_byte",
    "invalid continuation byte": "api.utf8.invalid_continuation_byte",
    "unexpected end of data": "api.utf8.unexpected_end",
}


def _reason(reasons: dict[str, str], english: str) -> str:
    """A parser's reason as a Message when the catalogue has it, else as it is."""
    key = reasons.get(english)
    return msg(key) if key is not None else english


class _BadNumber:
    """Stands in the parsed body for a number no float can hold, until its place is found."""

    __slots__ = ("problem",)

    def __init__(self, problem: Callable[[str], str]) -> None:
        self.problem = problem  # the message, given where the number is


def _digits(text: str) -> int:
    return sum(ch.isdigit() for ch in text)


def parse_json_body(body: bytes) -> dict[str, Any]:
    """The request body as a JSON object, or MalformedBody saying exactly what is wrong: not
    UTF-8, not JSON (with line and column), nested too deeply, NaN/Infinity (not JSON), a
    number too large for a float (with where it is), or not an object."""
    if not body.strip():
        raise MalformedBody(msg("api.body.empty", example=EXAMPLE_BODY))
    try:
        decoded = body.decode(json.detect_encoding(body), "surrogatepass")
    except UnicodeDecodeError as error:
        reason = _reason(_UTF8_REASONS, error.reason)
        raise MalformedBody(
            msg("api.body.not_utf8", reason=reason, byte=Count(error.start))
        ) from None
    numbers = _NumberReader()
    try:
        data = json.loads(
            decoded,
            parse_int=numbers.integer,
            parse_float=numbers.decimal,
            parse_constant=numbers.constant,
        )
    except json.JSONDecodeError as error:
        reason = _reason(_JSON_REASONS, error.msg)
        raise MalformedBody(
            msg("api.body.not_json", reason=reason, line=error.lineno, column=error.colno)
        ) from None
    except RecursionError:
        depth = Count(nesting_depth(decoded))
        raise MalformedBody(
            msg("api.body.too_deep", depth=depth, square="[", curly="{", example=EXAMPLE_BODY)
        ) from None
    if numbers.bad:
        where, marker = _first_bad_number(data)
        raise MalformedBody(marker.problem(where))
    if not isinstance(data, dict):
        kind = {list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
            type(data), "number"
        )
        raise MalformedBody(
            msg("api.body.not_object", example=EXAMPLE_BODY, kind=msg(f"api.body.kind.{kind}"))
        )
    return data


class _NumberReader:
    """The JSON parser's number hooks: a number no float can hold (or NaN, Infinity) becomes a
    _BadNumber, found in the parsed body afterwards to say where it is."""

    def __init__(self) -> None:
        self.bad: list[_BadNumber] = []

    def refuse(self, problem: Callable[[str], str]) -> _BadNumber:
        marker = _BadNumber(problem)
        self.bad.append(marker)
        return marker

    def integer(self, literal: str) -> int | _BadNumber:
        try:
            value = int(literal)  # ValueError past 4,300 digits
            float(value)  # OverflowError past about 1.8e308
            return value
        except (ValueError, OverflowError):
            digits = Count(_digits(literal))
            return self.refuse(
                lambda where: msg("api.body.number_digits", where=where, digits=digits)
            )

    def decimal(self, literal: str) -> float | _BadNumber:
        value = float(literal)
        if math.isfinite(value):
            return value
        shown = (
            literal
            if len(literal) <= 40
            else msg("api.body.number_of_digits", digits=Count(_digits(literal)))
        )
        return self.refuse(
            lambda where: msg("api.body.number_too_large", where=where, number=shown)
        )

    def constant(self, literal: str) -> _BadNumber:
        return self.refuse(lambda where: msg("api.body.not_finite", where=where, literal=literal))


def _first_bad_number(data: Any) -> tuple[str, _BadNumber]:
    """Where the first _BadNumber is, as `values.a` (or "the request body" at the top)."""
    # (The body itself is never a number here: a bare number is parsed before the check that
    # the body is an object, which comes after this one.)
    stack: list[tuple[tuple[str, ...], Any]] = [((), data)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, _BadNumber):
            return (".".join(path) or msg("api.body.the_body")), item
        if isinstance(item, dict):
            children = [((*path, quoted(str(key))), value) for key, value in item.items()]
        elif isinstance(item, list):
            children = [((*path, str(index)), value) for index, value in enumerate(item)]
        else:
            continue
        stack.extend(reversed(children))
    raise AssertionError("a bad number was parsed but not found")


# A backslash escape, a quote or a bracket: one pass over the text, no backtracking (a regex
# for whole strings would retry from every quote of `"\"\"\"…`, quadratic in the body).
_JSON_TOKEN = re.compile(r'\\.|["\[\]{}]', re.DOTALL)


def nesting_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in JSON text (brackets in strings do not
    count); linear in the length of the text."""
    depth = deepest = 0
    in_string = False
    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        if token == '"':
            in_string = not in_string
        elif in_string or len(token) == 2:
            continue
        elif token in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def _is_json(content_type: str) -> bool:
    media_type = content_type.split(";", 1)[0].strip().lower()
    return media_type == "application/json" or (
        media_type.startswith("application/") and media_type.endswith("+json")
    )


class JSONBodyRequest(Request):
    """A request whose `json()` is parse_json_body: FastAPI reads the body through it."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = parse_json_body(await self.body())
        return self._json


class JSONBodyRoute(APIRoute):
    """A route whose body must be a JSON object: anything else is a 422 in the one error
    shape with a message saying what is wrong (empty, not JSON, the wrong Content-Type, …)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handle = super().get_route_handler()

        async def parse_then_handle(request: Request) -> Response:
            request = JSONBodyRequest(request.scope, request.receive)
            body = await request.body()
            content_type = request.headers.get("content-type")
            if body.strip() and (content_type is None or not _is_json(content_type)):
                if content_type:
                    got: str = f"Content-Type {quoted(content_type)}"
                else:
                    got = msg("api.body.no_content_type")
                raise MalformedBody(msg("api.body.content_type", got=got))
            await request.json()
            return await handle(request)

        return parse_then_handle


# Every handler says its message in the request's language (app/api/language.py): the one a route
# chose, else `?lang=` or `Accept-Language`.


async def program_error(request: Request, exc: ProgramError) -> JSONBytes:
    return error_response(400, {"error": exc.to_dict(lang_of(request.scope))})


async def validation_error(request: Request, exc: RequestValidationError) -> JSONBytes:
    lang = lang_of(request.scope)
    errors = exc.errors()
    if not errors:
        message = text(lang, "api.invalid.request")
    else:
        message = describe_validation_error(errors[0], lang)
    if len(errors) > 1:
        message = text(lang, "api.invalid.and_more", message=message, more=len(errors) - 1)
    return error_response(422, error_body("InvalidRequest", message))


async def http_error(request: Request, exc: HTTPException) -> JSONBytes:
    lang = lang_of(request.scope)
    # The path and the method are the client's text: an error repeats at most their start.
    path = quoted(request.url.path)
    method = quoted(request.scope.get(ASKED_METHOD, request.method))
    if exc.status_code == 404:
        message = text(lang, "api.not_found", method=method, path=path)
    elif exc.status_code == 405:
        message = text(lang, "api.method_not_allowed", method=method, path=path)
    else:
        message = render(exc.detail, lang)
    type_ = HTTP_ERROR_TYPES.get(exc.status_code, "HTTPError")
    return JSONBytes(error_body(type_, message), status_code=exc.status_code, headers=exc.headers)


async def api_error(request: Request, exc: ApiError) -> JSONBytes:
    message = render(exc.message, lang_of(request.scope))
    body = error_body(exc.type, message)
    return JSONBytes(body, status_code=exc.status_code, headers=exc.headers)


def install_error_handlers(app: FastAPI) -> None:
    """Route every kind of failure to the one error shape."""
    app.add_exception_handler(ProgramError, program_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(ApiError, api_error)
    # Anything else is caught by app.middleware.UnexpectedErrors, inside the security headers.
