"""`GET /healthz`: liveness for load balancers and the Docker HEALTHCHECK."""

from __future__ import annotations

from fastapi import APIRouter

from chainrule.app import __version__
from chainrule.app.schemas import Health
from chainrule.app.server_state import Server

router = APIRouter(tags=["health"])


@router.get("/healthz", response_model=Health)
async def healthz(server: Server) -> Health:
    """Always cheap: Graphviz availability was found once at startup."""
    return Health(
        status="ok",
        version=__version__,
        graphviz=server.graphviz_version is not None,
        graphviz_version=server.graphviz_version,
    )
