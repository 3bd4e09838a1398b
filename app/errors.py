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

from chainrule.app.responses import JSONBytes
from chainrule.engine import ProgramError
from chainrule.engine.errors import quoted

HTTP_ERROR_TYPES = {
    400: "BadRequest",
    404: "NotFound",
    405: "MethodNotAllowed",
    413: "BodyTooLarge",
    422: "InvalidRequest",
    503: "Unavailable",
}


class ApiError(Exception):
    """An error the API reports as is, with its status (e.g. an export too large to draw)."""

    def __init__(self, status_code: int, type_: str, message: str) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.type = type_
        self.message = message


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


def describe_validation_error(error: dict[str, Any]) -> str:
    """`values.a: Input should be a valid number` from one of pydantic's error dicts."""
    location = list(error.get("loc", ()))
    if location[:1] == ["body"]:
        location = location[1:]
    where = ".".join(str(part) for part in location)
    message = error.get("msg", "invalid request")
    return f"{where}: {message}" if where else f"body: {message}"


class MalformedBody(HTTPException):
    """A request body that is not a JSON object we can read: a 422 `InvalidRequest` that says
    what is wrong (FastAPI's own parser answers 400 "There was an error parsing the body")."""

    def __init__(self, message: str) -> None:
        super().__init__(422, message)


EXAMPLE_BODY = '{"source": "a * b"}'
FLOAT_MAX = "about 1.8e308"


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
        raise MalformedBody(f"the request body is empty: send a JSON object such as {EXAMPLE_BODY}")
    try:
        text = body.decode(json.detect_encoding(body), "surrogatepass")
    except UnicodeDecodeError as error:
        raise MalformedBody(
            f"the request body is not valid JSON: it is not UTF-8 text ({error.reason} at byte "
            f"{error.start:,})"
        ) from None
    bad: list[_BadNumber] = []

    def refuse(problem: Callable[[str], str]) -> _BadNumber:
        marker = _BadNumber(problem)
        bad.append(marker)
        return marker

    def parse_int(literal: str) -> int | _BadNumber:
        try:
            value = int(literal)  # ValueError past 4,300 digits
            float(value)  # OverflowError past about 1.8e308
            return value
        except (ValueError, OverflowError):
            digits = _digits(literal)
            return refuse(
                lambda where: (
                    f"the number in {where} has {digits:,} digits: it is too large "
                    f"for a float (at most {FLOAT_MAX})"
                )
            )

    def parse_float(literal: str) -> float | _BadNumber:
        value = float(literal)
        if math.isfinite(value):
            return value
        shown = literal if len(literal) <= 40 else f"a number of {_digits(literal):,} digits"
        return refuse(
            lambda where: (
                f"the number in {where} ({shown}) is too large for a float (at most {FLOAT_MAX})"
            )
        )

    def parse_constant(literal: str) -> _BadNumber:
        return refuse(
            lambda where: (
                f"{where} is {literal}, which is not valid JSON (JSON numbers are "
                "finite): send a finite number"
            )
        )

    try:
        data = json.loads(
            text, parse_int=parse_int, parse_float=parse_float, parse_constant=parse_constant
        )
    except json.JSONDecodeError as error:
        raise MalformedBody(
            f"the request body is not valid JSON: {error.msg} (line {error.lineno}, column "
            f"{error.colno})"
        ) from None
    except RecursionError:
        raise MalformedBody(
            f"the request body is nested too deeply ({nesting_depth(text):,} levels of [ and {{): "
            f"a request is an object with at most one level inside, such as {EXAMPLE_BODY}"
        ) from None
    if bad:
        where, marker = _first_bad_number(data)
        raise MalformedBody(marker.problem(where))
    if not isinstance(data, dict):
        kind = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
            type(data), "a number"
        )
        raise MalformedBody(
            f"the request body must be a JSON object such as {EXAMPLE_BODY}, not {kind}"
        )
    return data


def _first_bad_number(data: Any) -> tuple[str, _BadNumber]:
    """Where the first _BadNumber is, as `values.a` (or "the request body" at the top)."""
    stack: list[tuple[tuple[str, ...], Any]] = [((), data)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, _BadNumber):
            return (".".join(path) or "the request body"), item
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
                got = f"Content-Type {quoted(content_type)}" if content_type else "no Content-Type"
                raise MalformedBody(
                    f"the request body must be JSON sent with Content-Type: application/json "
                    f"(got {got})"
                )
            await request.json()
            return await handle(request)

        return parse_then_handle


async def program_error(_: Request, exc: ProgramError) -> JSONBytes:
    return error_response(400, {"error": exc.to_dict()})


async def validation_error(_: Request, exc: RequestValidationError) -> JSONBytes:
    errors = exc.errors()
    message = describe_validation_error(errors[0]) if errors else "invalid request"
    if len(errors) > 1:
        message += f" (and {len(errors) - 1} more)"
    return error_response(422, error_body("InvalidRequest", message))


async def http_error(request: Request, exc: HTTPException) -> JSONBytes:
    if exc.status_code == 404:
        message = f"no such page or endpoint: {request.method} {request.url.path}"
    elif exc.status_code == 405:
        message = f"method {request.method} is not allowed on {request.url.path}"
    else:
        message = str(exc.detail)
    type_ = HTTP_ERROR_TYPES.get(exc.status_code, "HTTPError")
    return JSONBytes(error_body(type_, message), status_code=exc.status_code, headers=exc.headers)


async def api_error(_: Request, exc: ApiError) -> JSONBytes:
    return error_response(exc.status_code, error_body(exc.type, exc.message))


def install_error_handlers(app: FastAPI) -> None:
    """Route every kind of failure to the one error shape."""
    app.add_exception_handler(ProgramError, program_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(ApiError, api_error)
    # Anything else is caught by app.middleware.UnexpectedErrors, inside the security headers.
