"""`GET /api/presets`: the example programs of the preset menu."""

from __future__ import annotations

from functools import cache

from fastapi import APIRouter

from chainrule.app.api.language import RequestLanguage
from chainrule.app.api.schemas import Preset, error_responses
from chainrule.app.http.responses import JSONBytes, dumps
from chainrule.engine.presets import presets as presets_in

router = APIRouter(tags=["presets"])


@cache
def presets_json(lang: str) -> bytes:
    return dumps(presets_in(lang))


@router.get("/api/presets", response_model=list[Preset], responses=error_responses(422, 429))
async def presets(language: RequestLanguage) -> JSONBytes:
    """Every preset: `{id, title, source, values, note}`, in menu order, titles and notes in
    the request's language."""
    return JSONBytes(presets_json(language.choose()))
