"""`GET /api/lessons`: the guided lessons (lessons/*.json, validated when the app started)."""

from __future__ import annotations

from fastapi import APIRouter, Request

from chainrule.app.api.language import RequestLanguage
from chainrule.app.api.schemas import Lesson, error_responses
from chainrule.app.http.responses import JSONBytes

router = APIRouter(tags=["lessons"])


@router.get("/api/lessons", response_model=list[Lesson], responses=error_responses(422, 429))
async def lessons(request: Request, language: RequestLanguage) -> JSONBytes:
    """Every lesson with its program and stops, each stop resolved to a step and node ids; the
    texts in the request's language."""
    return JSONBytes(request.app.state.lessons_json[language.choose()])
