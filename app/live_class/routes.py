"""The class's HTTP routes, its WebSocket and the join page `/c/<code>`."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request, WebSocket
from fastapi.responses import HTMLResponse

from chainrule.app.api.language import RequestLanguage
from chainrule.app.api.schemas import error_responses
from chainrule.app.http.errors import ApiError, JSONBodyRoute
from chainrule.app.http.pages import page_response
from chainrule.app.http.ratelimit import SlidingWindowLimiter
from chainrule.app.http.settings_dependency import Settings
from chainrule.app.live_class.codes import (
    new_code,
    new_token,
    read_code,
    shown_code,
    token_hash,
)
from chainrule.app.live_class.connection import serve
from chainrule.app.live_class.hub import Hub
from chainrule.app.live_class.protocol import ClassCreate, ClassCreated, ClassInfo
from chainrule.app.live_class.store import StoreUnavailable
from chainrule.app.settings import AppSettings
from chainrule.engine.i18n import Count, msg

router = APIRouter(tags=["class"], route_class=JSONBodyRoute)
reads = APIRouter(tags=["class"])  # no body to parse
pages = APIRouter(include_in_schema=False)

STORE_RETRY_AFTER_S = 5  # a Redis restart takes a second or two; its clients retry meanwhile


def store_away() -> ApiError:
    """The class store (Redis) cannot be reached: 503, try again in a few seconds."""
    return ApiError(
        503, "Unavailable", msg("api.class.store_away"),
        headers={"Retry-After": str(STORE_RETRY_AFTER_S)},
    )  # fmt: skip


def creations_of(request: Request, settings: AppSettings) -> SlidingWindowLimiter:
    """This process's bound on classes started a minute, whoever starts them."""
    state = request.app.state
    if getattr(state, "class_creations", None) is None:
        state.class_creations = SlidingWindowLimiter(settings.class_creations_per_process_minute)
    return state.class_creations


CODE_PATH = Path(max_length=64, description="The join code, as shown (`K7Q-4MX`) or not.")


def hub_of(request: Request | WebSocket) -> Hub:
    return request.app.state.hub


@router.post(
    "/api/class", response_model=ClassCreated, responses=error_responses(413, 422, 429, 503)
)
async def create_class(
    body: ClassCreate, request: Request, settings: Settings, language: RequestLanguage
) -> ClassCreated:
    """Start a class on `view`: a join code for the students and a token for the teacher's page."""
    language.choose(body.lang)
    if len(body.view.source) > settings.max_source_chars:
        limit = Count(settings.max_source_chars)
        raise ApiError(422, "InvalidRequest", msg("api.class.source_too_long", limit=limit))
    hub = hub_of(request)
    address = request.client.host if request.client else "unknown"
    try:
        allowed = await hub.store.creation(address, settings.class_creations_per_minute)
    except StoreUnavailable:
        raise store_away() from None
    if not allowed or creations_of(request, settings).hit("process") > 0:
        raise ApiError(
            429, "RateLimited", msg("api.class.too_many_creations"), headers={"Retry-After": "60"}
        )
    token = new_token()
    fields = {
        "view": body.view.model_dump_json(by_alias=True), "mode": "follow", "question": "null",
        "key": "null", "board": "null", "open": "", "token": token_hash(token),
        "max": str(settings.class_max_students),
    }  # fmt: skip
    for _ in range(8):  # a taken code is one chance in a billion per class running
        code = new_code()
        try:
            created = await hub.store.create(code, fields, settings.class_idle_expiry_s)
        except OverflowError:
            raise ApiError(503, "Unavailable", msg("api.class.too_many_classes")) from None
        except StoreUnavailable:
            raise store_away() from None
        if created:
            return ClassCreated(
                code=code, shown_code=shown_code(code), join_path=f"/c/{shown_code(code)}",
                token=token, max_students=settings.class_max_students,
                idle_expiry_s=settings.class_idle_expiry_s,
            )  # fmt: skip
    raise ApiError(503, "Unavailable", msg("api.class.too_many_classes"))


@reads.get(
    "/api/class/{code}", response_model=ClassInfo, responses=error_responses(404, 422, 429, 503)
)
async def class_info(
    code: Annotated[str, CODE_PATH],
    request: Request,
    language: RequestLanguage,
    settings: Settings,
) -> ClassInfo:
    """Whether a class with this code is running (unknown codes count as guesses: 429 beyond
    the limit per client address)."""
    language.choose()
    hub = hub_of(request)
    read = read_code(code)
    address = request.client.host if request.client else "unknown"
    limit = settings.class_join_guesses_per_minute
    try:
        if await hub.store.guessed_out(address, limit):  # the same answer, class or not
            raise ApiError(429, "RateLimited", msg("api.class.too_many_guesses"))
        fields = await hub.store.read(read) if read else None
        if fields is None or read is None:
            if not await hub.store.guess(address, limit):
                raise ApiError(429, "RateLimited", msg("api.class.too_many_guesses"))
            raise ApiError(404, "NotFound", msg("api.class.no_class", code=code[:16]))
    except StoreUnavailable:
        raise store_away() from None
    return ClassInfo(code=read, shown_code=shown_code(read), max_students=int(fields["max"]))


@reads.websocket("/api/class/{code}/live")
async def live(socket: WebSocket, code: str) -> None:
    """The class's live channel (docs/live-class.md)."""
    await serve(socket, code, hub_of(socket), socket.app.state.settings)


@pages.get("/c/{code}", response_class=HTMLResponse)
@pages.get("/c", response_class=HTMLResponse)
async def join_page(request: Request, code: str = "") -> HTMLResponse:
    """The page, joining the class `code` (a form asks for a code when it is missing)."""
    read = read_code(code)
    return page_response(request, class_code=shown_code(read) if read else "")
