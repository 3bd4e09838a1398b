"""`GET /healthz`: liveness for load balancers and the Docker HEALTHCHECK."""

from __future__ import annotations

from fastapi import APIRouter

from chainrule.app import __version__
from chainrule.app.api.schemas import Health, HealthDetail, OffloadLoad
from chainrule.app.http.server_state import Server

router = APIRouter(tags=["health"])


@router.get("/healthz", response_model=Health)
async def healthz(server: Server) -> Health:
    """Always cheap: Graphviz availability was found once at startup; the detail says how
    loaded the worker that answered is (its helper processes' lanes, its Graphviz slots)."""
    return Health(
        status="ok",
        version=__version__,
        graphviz=server.graphviz_version is not None,
        graphviz_version=server.graphviz_version,
        detail=HealthDetail(
            offload=OffloadLoad.model_validate(server.offload.depth()),
            graphviz_running=server.graphviz.running,
            graphviz_slots=server.graphviz.slots,
        ),
    )
