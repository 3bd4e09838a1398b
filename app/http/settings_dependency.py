"""The settings a route is given: a FastAPI dependency (tests override it), kept apart from
app/settings.py so that reading the settings needs no web framework."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from chainrule.app.settings import AppSettings


async def app_settings(request: Request) -> AppSettings:
    """The settings the app was created with (a dependency; tests may override it).

    Async on purpose: FastAPI runs sync dependencies in a thread, which costs more than the
    whole warm request."""
    return request.app.state.settings


Settings = Annotated[AppSettings, Depends(app_settings)]
