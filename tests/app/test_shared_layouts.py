"""Layouts shared through Redis (app/layout/shared.py, app/http/cache.py SharedCache): what one
process laid out, another finds without running Graphviz; a store that fails is passed over."""

from __future__ import annotations

import orjson
import pytest
import redis

from chainrule.app.http.cache import BoundedCache, SharedCache
from chainrule.app.layout.layouter import Layouter, structure_of
from chainrule.app.layout.placing import layout_structure, placement
from chainrule.app.layout.shared import decode, encode, share_layouts
from chainrule.app.settings import AppSettings
from chainrule.engine import trace
from chainrule.engine.reply import trace_reply
from chainrule.engine.steps import steps

# Two statements of several nodes each: a grouped layout, with its collapsed layout inside.
PROGRAM = "x = 2\nw = 3\nh = tanh(x * w + 1)\nL = (h - 1) * (h - 1)"


def structure(source: str = PROGRAM):
    traced = trace(source).to_dict()
    return structure_of(traced["nodes"], traced["edges"], traced.get("groups", ()))


def layouter(redis_url: str | None) -> Layouter:
    settings = AppSettings(redis_url=redis_url)
    return share_layouts(Layouter(dot_timeout_s=5, dot_max_nodes=1000, cache_size=16), settings)


def test_a_layout_round_trips_through_its_stored_form():
    layout, _ = Layouter(dot_timeout_s=5, dot_max_nodes=1000, cache_size=4).layout(structure())
    assert layout.collapsed is not None and any(frame is not None for frame in layout.frames)
    assert decode(encode(layout)) == layout


def test_a_second_process_finds_the_layout_of_the_first(redis_url):
    redis.Redis.from_url(redis_url).flushdb()
    first, second = layouter(redis_url), layouter(redis_url)
    laid_out, cached = first.layout(structure())
    assert not cached and first.dot_runs >= 1  # a grouped graph: dot for each of its layouts
    found, cached = second.layout(structure())
    assert (cached, second.dot_runs) == (True, 0)  # no Graphviz in the second process
    assert found == laid_out


def test_a_layout_read_back_from_redis_places_the_reply_as_the_one_laid_out(redis_url):
    # The reply is written from a typed Placement (engine/reply.py); Redis keeps the layout as
    # JSON, whose boxes come back as lists: the Placement and the reply must not change.
    redis.Redis.from_url(redis_url).flushdb()
    traced = trace(PROGRAM)
    first, second = layouter(redis_url), layouter(redis_url)
    laid_out, _ = first.layout(layout_structure(traced.graph))
    found, cached = second.layout(layout_structure(traced.graph))
    assert (cached, second.dot_runs) == (True, 0)
    want, got = placement(laid_out, traced), placement(found, traced)
    assert got == want
    assert any(box is not None for box in got.group_boxes)  # a grouped graph: frames too
    boxes = [*got.boxes, *got.group_cards, *(box for box in got.group_boxes if box is not None)]
    assert all(type(box) is tuple and len(box) == 4 for box in boxes)
    timeline = steps(traced)
    assert orjson.dumps(trace_reply(traced, timeline, got)) == orjson.dumps(
        trace_reply(traced, timeline, want)
    )


def test_without_redis_the_cache_is_the_process_own():
    assert isinstance(layouter(None).cache, BoundedCache)


class BrokenStore:
    def get(self, name: str) -> bytes | None:
        raise redis.ConnectionError("gone")

    def set(self, name: str, value: bytes, ex: int) -> None:
        raise redis.ConnectionError("gone")


def test_a_store_that_fails_is_passed_over():
    local: BoundedCache[str] = BoundedCache(4, 100)
    cache = SharedCache(local, BrokenStore(), "p:", str.encode, bytes.decode, 60)
    assert cache.get(b"k") is None
    cache.put(b"k", "v")
    assert cache.get(b"k") == "v"  # from this process's own LRU
    assert cache.stats().entries == 1


@pytest.mark.parametrize("stored", [b'{"format": 0, "layout": {}}'])
def test_an_entry_of_another_format_is_a_miss(stored):
    assert decode(stored) is None


def test_two_apps_share_layouts_through_redis(make_client, redis_url):
    redis.Redis.from_url(redis_url).flushdb()
    body = {"source": "p = 7\nq = p * p + 1"}
    first = make_client(redis_url=redis_url).post("/api/graph", json=body).json()
    second = make_client(redis_url=redis_url).post("/api/graph", json=body).json()
    assert first["layout"]["cached"] is False and second["layout"]["cached"] is True
    assert [(n["x"], n["y"]) for n in first["nodes"]] == [(n["x"], n["y"]) for n in second["nodes"]]
