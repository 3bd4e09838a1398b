"""`POST /api/descend`: steps of gradient descent on a program's leaves (the Train lab)."""

from __future__ import annotations

from fastapi import APIRouter

from chainrule import engine
from chainrule.app.api.graph_body import limits_of
from chainrule.app.api.language import RequestLanguage
from chainrule.app.api.schemas import DescendRequest, DescendResponse, error_responses
from chainrule.app.http.errors import JSONBodyRoute
from chainrule.app.http.responses import JSONBytes, dumps
from chainrule.app.http.server_state import Server
from chainrule.app.http.settings_dependency import Settings
from chainrule.app.settings import AppSettings

router = APIRouter(tags=["train"], route_class=JSONBodyRoute)


def descend_body(request: DescendRequest, settings: AppSettings, lang: str) -> bytes:
    descent = engine.descend(
        request.source,
        request.values,
        parameters=request.parameters,
        lr=request.lr,
        steps=request.steps,
        momentum=request.momentum,
        velocity=request.velocity,
        baseline=request.baseline,
        first_step=request.first_step,
        limits=limits_of(settings),
        max_node_steps=settings.descend_max_node_steps,
    )
    return dumps(descent.to_dict(lang))


@router.post(
    "/api/descend",
    response_model=DescendResponse,
    responses=error_responses(400, 413, 422, 429, 503),
)
async def descend(
    request: DescendRequest, settings: Settings, server: Server, language: RequestLanguage
) -> JSONBytes:
    """Run `steps` steps of `p ← p − lr · ∂root/∂p` (with momentum: `v ← μ·v + ∂root/∂p;
    p ← p − lr·v`) on the leaves in `parameters`, starting from `values`. Replies each step's
    root and parameter values; stops early, saying why, when the root climbs above where
    training began or stops being a finite number. A page's Play asks for batches."""
    lang = language.choose(request.lang)
    size = len(request.source)
    # A long program in a helper process: up to 200,000 node-steps, 2 to 3 s of work.
    return JSONBytes(
        await server.offload.by_size(
            size, settings.offload_min_source_chars, descend_body, request, settings, lang
        )
    )
