"""JSON bytes out: orjson, never FastAPI's dict encoder (slow) or Starlette's (refuses NaN)."""

from __future__ import annotations

import json
from typing import Any

import orjson
from starlette.responses import Response


def dumps(payload: Any) -> bytes:
    """Strict JSON: orjson writes NaN/Infinity floats as null; text that is not valid Unicode
    (a lone surrogate that slipped through) is replaced rather than failing the response."""
    try:
        return orjson.dumps(payload)
    except TypeError:
        return json.dumps(payload, ensure_ascii=False, allow_nan=False, default=str).encode(
            "utf-8", "replace"
        )


class JSONBytes(Response):
    """A response whose body is already-encoded JSON (or a payload encoded with `dumps`)."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return content if isinstance(content, bytes) else dumps(content)
