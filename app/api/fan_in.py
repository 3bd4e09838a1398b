"""`POST /api/fan-in`: where one element of a tensor program's tensor gets its gradient."""

from __future__ import annotations

from fastapi import APIRouter

from chainrule.app.api.fan_in_schemas import FanInRequest, FanInResponse
from chainrule.app.api.graph_body import limits_of
from chainrule.app.api.language import RequestLanguage
from chainrule.app.api.schemas import error_responses
from chainrule.app.http.errors import JSONBodyRoute
from chainrule.app.http.responses import JSONBytes, dumps
from chainrule.app.http.server_state import Server
from chainrule.app.http.settings_dependency import Settings
from chainrule.app.settings import AppSettings
from chainrule.engine.errors import BadLeaf
from chainrule.engine.i18n import msg
from chainrule.engine.tensor_program import trace_tensors
from chainrule.engine.tensor_reader import is_tensor_program
from chainrule.engine.tensor_reply import fan_in_reply

router = APIRouter(tags=["graph"], route_class=JSONBodyRoute)


def fan_in_body(request: FanInRequest, settings: AppSettings) -> bytes:
    """The body of `POST /api/fan-in` (its errors are said in the request's language by the
    error handlers, as every ProgramError)."""
    if not is_tensor_program(request.source):
        raise BadLeaf(msg("error.tensor.fan_in_scalar"))
    trace = trace_tensors(request.source, request.values, limits=limits_of(settings))
    return dumps(fan_in_reply(trace, request.tensor, request.index))


@router.post(
    "/api/fan-in",
    response_model=FanInResponse,
    responses=error_responses(400, 413, 422, 429, 503),
)
async def fan_in(
    request: FanInRequest, settings: Settings, server: Server, language: RequestLanguage
) -> JSONBytes:
    """Every term of the backward pass that adds to `tensor[index]`'s gradient (`dW[1,2] =
    Σᵢ X[i,1]·dY[i,2]`): the op and output element it flows from, upstream × local, in the
    order the pass adds them; their sum is the element's `grad`."""
    language.choose(request.lang)  # the language the error handlers say an error in
    size = len(request.source)
    if size >= settings.offload_min_source_chars:  # a helper process, as /api/graph's
        return JSONBytes(await server.offload.run(size, fan_in_body, request, settings))
    return JSONBytes(await server.offload.in_thread(size, fan_in_body, request, settings))
