"""Assembles the app: routers, static files, templates, error handlers and middleware."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.templating import Jinja2Templates
from starlette.middleware.gzip import GZipMiddleware

from chainrule.app import __version__
from chainrule.app.api import (
    descend,
    export,
    graph,
    health,
    landscape,
    lessons,
    paths,
    presets,
    tensor_routes,
    values,
)
from chainrule.app.api.graph_body import structure_id, warm_up
from chainrule.app.api.lesson_files import LESSONS_DIR, in_language, read_lessons
from chainrule.app.api.sandbox import router as sandbox_router
from chainrule.app.api.schemas import GraphRequest
from chainrule.app.http.errors import install_error_handlers
from chainrule.app.http.inflight import CancelOnDisconnect, InFlight
from chainrule.app.http.middleware import (
    BodyLimit,
    CacheControl,
    HeadAsGet,
    SecurityHeaders,
    UnexpectedErrors,
    VaryOnLanguage,
)
from chainrule.app.http.pages import STATIC_DIR, TEMPLATES_DIR, VersionedStaticFiles, asset_version
from chainrule.app.http.pages import router as pages_router
from chainrule.app.http.precompressed import (
    DEFAULT_DIR,
    PrecompressedStaticFiles,
    start_precompressing,
)
from chainrule.app.http.ratelimit import RateLimitMiddleware
from chainrule.app.http.responses import dumps
from chainrule.app.http.server_state import ServerState
from chainrule.app.live_class import routes as live_class
from chainrule.app.live_class.hub import make_hub
from chainrule.app.settings import AppSettings, get_settings
from chainrule.engine.i18n import LANGS


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    # Start the helper processes now, so the first big program does not pay for their start-up.
    app.state.server.offload.start(warm_up)
    # Pyodide's wasm gzipped once, before a learner's first run asks for it.
    start_precompressing(STATIC_DIR, app.state.precompressed_dir)
    # A stop signal cancels the requests at work (each answers 503) instead of waiting for them.
    restore_signals = app.state.in_flight.on_stop_signals()
    await app.state.hub.start()
    yield
    app.state.in_flight.stop()
    restore_signals()
    await app.state.hub.close()
    app.state.server.close()


def create_app(settings: AppSettings | None = None) -> FastAPI:
    """A new app; `settings` defaults to the environment's (`CHAINRULE_*`)."""
    settings = settings or get_settings()
    app = FastAPI(
        title="chainrule",
        version=__version__,
        description="Reverse-mode autodiff made visible: trace a program, lay out its graph.",
        docs_url=None,  # served by app.pages from vendored Swagger UI (no CDN, no inline script)
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.server = ServerState.from_settings(settings)
    app.state.in_flight = InFlight()
    app.state.hub = make_hub(settings)
    app.state.templates = Jinja2Templates(directory=TEMPLATES_DIR)
    # Lessons are checked now: a lesson naming what its program lacks stops the start, named.
    read = read_lessons(settings.lessons_dir or LESSONS_DIR)
    app.state.lessons_json = {
        lang: dumps([in_language(lesson, lang) for lesson in read]) for lang in LANGS
    }
    version = app.state.asset_version = asset_version()

    routers = (graph.router, values.router, descend.router, export.router, presets.router)
    routers += (landscape.router, paths.router, tensor_routes.router)
    routers += (lessons.router, health.router, live_class.router, live_class.reads)
    routers += (live_class.pages,)
    for router in (*routers, pages_router, sandbox_router):
        app.include_router(router)
    # The page loads everything from /static/<version>/ (modules import each other relatively,
    # so they inherit it): one deploy's files never mix with another's, and each is cached for
    # good. Plain /static/ stays for links from elsewhere, revalidated on every use.
    gzipped = (settings.precompressed_dir or DEFAULT_DIR) if settings.precompress_static else None
    app.state.precompressed_dir = gzipped
    versioned = VersionedStaticFiles(directory=STATIC_DIR, precompressed_dir=gzipped)
    app.mount(f"/static/{version}", versioned, name="assets")
    static = PrecompressedStaticFiles(directory=STATIC_DIR, precompressed_dir=gzipped)
    app.mount("/static", static, name="static")

    install_error_handlers(app)
    app.add_middleware(UnexpectedErrors)  # innermost: the middleware below add their headers
    # An API request whose client goes away is cancelled, its work with it (app/http/inflight.py).
    app.add_middleware(CancelOnDisconnect, in_flight=app.state.in_flight)
    # Replies over 1 KB compressed for clients that accept it: a 1,000-node slider reply is
    # ~121 KB of JSON numbers and ~31 KB gzipped. Level 6, not Starlette's 9: the same size here,
    # in 2.1 ms instead of 2.8 ms, on every slider move.
    app.add_middleware(GZipMiddleware, minimum_size=1000, compresslevel=6)
    app.add_middleware(BodyLimit, max_body_bytes=settings.max_body_bytes)
    app.add_middleware(RateLimitMiddleware, per_minute=settings.rate_limit_per_minute)
    app.add_middleware(VaryOnLanguage)  # on 413s, 429s and 500s too: their words vary
    app.add_middleware(CacheControl)  # on 413s, 429s and 500s too
    app.add_middleware(SecurityHeaders)  # also on 413s and 500s
    app.add_middleware(HeadAsGet)  # outermost: a HEAD gets every header a GET would
    app.openapi = with_real_structure_ids(app, settings)
    return app


def with_real_structure_ids(app: FastAPI, settings: AppSettings) -> Callable[[], dict[str, Any]]:
    """`app.openapi` whose `POST /api/values` examples name the structure id this server gives
    their body: computed, never quoted (an id changes with the engine's version, the options and
    the limits, and a quoted one went stale unseen)."""
    default = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schemas = default()["components"]["schemas"]
            (example,) = schemas["ValuesRequest"]["examples"]
            body = {name: value for name, value in example.items() if name != "structure"}
            structure = structure_id(GraphRequest.model_validate(body), settings)
            example["structure"] = schemas["ValuesResponse"]["examples"][0]["structure"] = structure
        return app.openapi_schema

    return openapi


app = create_app()
