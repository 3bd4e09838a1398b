"""One JSON error shape for everything: `{"error": {type, message, line, column, …}}`."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException

from app.responses import JSONBytes
from engine import ProgramError

HTTP_ERROR_TYPES = {
    400: "BadRequest",
    404: "NotFound",
    405: "MethodNotAllowed",
    413: "BodyTooLarge",
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
    if error.get("type") == "json_invalid":
        reason = error.get("ctx", {}).get("error", "invalid JSON")
        at = f" at character {location[0]}" if location else ""
        return f"the body is not valid JSON{at}: {reason}"
    where = ".".join(str(part) for part in location)
    message = error.get("msg", "invalid request")
    return f"{where}: {message}" if where else f"body: {message}"


async def program_error(_: Request, exc: ProgramError) -> JSONBytes:
    return error_response(400, {"error": exc.to_dict()})


async def validation_error(_: Request, exc: RequestValidationError) -> JSONBytes:
    errors = exc.errors()
    message = describe_validation_error(errors[0]) if errors else "invalid request"
    if len(errors) > 1:
        message += f" (and {len(errors) - 1} more)"
    return error_response(422, error_body("InvalidRequest", message))


async def http_error(request: Request, exc: HTTPException) -> JSONBytes:
    if isinstance(exc.__cause__, UnicodeDecodeError):
        # FastAPI's "There was an error parsing the body" (400) for bytes that are not UTF-8:
        # a malformed request like any other invalid JSON.
        message = f"the body is not valid JSON: it is not UTF-8 text ({exc.__cause__.reason})"
        return error_response(422, error_body("InvalidRequest", message))
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
