"""`GET /api/presets`: the example programs of the preset menu."""

from __future__ import annotations

from functools import cache

from fastapi import APIRouter

from chainrule import engine
from chainrule.app.responses import JSONBytes, dumps
from chainrule.app.schemas import Preset, error_responses

router = APIRouter(tags=["presets"])


@cache
def presets_json() -> bytes:
    return dumps(list(engine.PRESETS))


@router.get("/api/presets", response_model=list[Preset], responses=error_responses(429))
async def presets() -> JSONBytes:
    """Every preset: `{id, title, source, values, note}`, in menu order."""
    return JSONBytes(presets_json())
