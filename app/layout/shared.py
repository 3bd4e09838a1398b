"""Layouts shared through Redis (`CHAINRULE_REDIS_URL`): a graph laid out by one worker or
replica is not laid out again by another. Each process keeps its own LRU in front (app/http/cache.py
SharedCache); Redis keeps a layout `layout_cache_ttl_s` as JSON (coordinates only, no code), under
`chainrule:layout:<structure key>`."""

from __future__ import annotations

from typing import Any

import orjson

from chainrule.app.http.cache import SharedCache
from chainrule.app.layout.layouter import Layout, Layouter
from chainrule.app.settings import AppSettings

PREFIX = "chainrule:layout:"
# Bumped when Layout's fields change, so an old replica's entries are never read as new ones.
FORMAT = 1


def layout_dict(layout: Layout) -> dict[str, Any]:
    return {
        "engine": layout.engine, "width": layout.width, "height": layout.height,
        "boxes": layout.boxes, "frames": layout.frames,
        "collapsed": layout_dict(layout.collapsed) if layout.collapsed else None,
    }  # fmt: skip


def layout_of(data: dict[str, Any]) -> Layout:
    return Layout(
        engine=data["engine"], width=data["width"], height=data["height"],
        boxes=tuple(tuple(box) for box in data["boxes"]),
        frames=tuple(tuple(frame) if frame is not None else None for frame in data["frames"]),
        collapsed=layout_of(data["collapsed"]) if data["collapsed"] else None,
    )  # fmt: skip


def encode(layout: Layout) -> bytes:
    return orjson.dumps({"format": FORMAT, "layout": layout_dict(layout)})


def decode(data: bytes) -> Layout | None:
    stored = orjson.loads(data)
    return layout_of(stored["layout"]) if stored.get("format") == FORMAT else None


def share_layouts(layouter: Layouter, settings: AppSettings) -> Layouter:
    """`layouter`, its cache shared through Redis when the settings name one."""
    if settings.redis_url:
        import redis

        remote = redis.Redis.from_url(settings.redis_url, socket_timeout=0.5)
        layouter.cache = SharedCache(
            layouter.cache, remote, PREFIX, encode, decode, settings.layout_cache_ttl_s
        )
    return layouter
