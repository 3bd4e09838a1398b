"""Every server setting in one object, read from `CHAINRULE_*` environment variables.

Plain pydantic, no web framework: the notebook's widget (chainrule.show) reads these limits
too, and `pip install chainrule` installs no server (the route's dependency that hands a request
its settings is app/http/settings_dependency.py)."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from chainrule.engine.builder import MAX_DEPTH, MAX_NODES, MAX_VALUE_NODES

ENV_PREFIX = "CHAINRULE_"


class AppSettings(BaseModel):
    """Limits, timeouts and serving options; `CHAINRULE_MAX_NODES=5000` overrides `max_nodes`
    (names in any case), and a value given to the constructor overrides both."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _from_environment(cls, given: Any) -> Any:
        if not isinstance(given, dict):
            return given
        environment = {name.upper(): value for name, value in os.environ.items()}
        from_environment = {
            field: environment[ENV_PREFIX + field.upper()]
            for field in cls.model_fields
            if ENV_PREFIX + field.upper() in environment
        }
        return {**from_environment, **given}

    # Limits on what one request may ask for (PRODUCT §5). A program is bounded by its work, its
    # tokens (issue 42: the page's sandbox writes long place names, `model.layers[1].neurons[3]`),
    # and its characters by the body; a live class's program, sent to every student, by its
    # characters (`max_source_chars`).
    max_source_tokens: int = 100_000
    max_source_chars: int = 100_000
    max_nodes: int = MAX_NODES
    max_depth: int = MAX_DEPTH
    max_body_bytes: int = 1_048_576
    # A graph read from a Value in the learner's own kernel (chainrule.trace_value, show,
    # save_html) is no program the server parses: no character count, only its nodes are
    # bounded (memory: about 8 KB a node while its reply is made, bench/demo.py; docs/python.md).
    max_value_nodes: int = MAX_VALUE_NODES

    # Layout: dot is exact but slow (~0.5 s at 1,000 nodes) and far slower on long edges; above
    # dot_max_nodes, above dot_max_lanes (a vertex per column an edge crosses:
    # app/layout/layouter.py's
    # dot_cost, predicted before dot runs) or past the budget of its network simplex, with every
    # Graphviz slot taken or after dot_timeout_s, the layered fallback takes over.
    dot_timeout_s: float = 2.0
    dot_binary: str | None = None  # Graphviz's dot; default: `dot` on the PATH
    dot_max_nodes: int = 1_000
    dot_max_lanes: int = 20_000
    layout_cache_size: int = 256
    # A graph of this many nodes traced in the caller's own process (the notebook's
    # chainrule.trace_value, show, save_html) is laid out in a helper process beside its passes
    # (app/layout/process.py; 0: never). Below it the fallback's Python costs less than a helper's
    # start (the layered layout: ~12 µs a node; a helper: ~0.2 s of another core, once).
    layout_process_min_nodes: int = 20_000
    # A graph of this many nodes read from a Value in a notebook's kernel (chainrule.show) shows
    # its overview's first view while the rest of its trace is made (docs/python.md; 0: never):
    # micrograd's demo's overview is drawn about 2 s sooner, the player no later. Below it the
    # whole trace comes about as soon as the first view would.
    first_view_min_nodes: int = 20_000
    response_cache_size: int = 512
    # A reply is about 1.2 KB a node: 16 MB keeps a reply of up to about 3,400 nodes (a quarter)
    # and every preset's and lesson's; a bigger graph is traced again (a slider asks /api/values).
    # 64 MB a worker held the costliest mix's replies after it ended: bench/load.py (g), +34%.
    response_cache_bytes: int = 16 * 1024 * 1024

    # Every Graphviz process (layout and export) is bounded (app/layout/graphviz.py): address space,
    # CPU time (its timeout), output read; at most graphviz_slots run at once per server
    # process, and a request that finds them taken gets the fallback layout or a 503 at once.
    graphviz_max_memory_mb: int = 512
    graphviz_max_output_mb: int = 64
    graphviz_slots: int = 2
    graphviz_wait_s: float = 0.0

    # Programs this long (so possibly thousands of nodes) are traced and laid out in a worker
    # process: a big trace pauses its process for garbage collection, which would stall
    # /healthz and every other request of this worker. Two lanes (app/http/offload.py): programs
    # shorter than offload_big_source_chars never wait behind longer ones; in each lane the
    # shortest waiting program goes first, and at most offload_max_waiting wait (then 503).
    offload_min_source_chars: int = 1_000
    offload_big_source_chars: int = 20_000
    offload_processes: int = 1
    offload_max_waiting: int = 8
    # Shorter programs are traced in this process's threads, at most trace_threads at once
    # (each holds the GIL while it traces: more would only slow /healthz), the shortest waiting
    # first, at most 8 × offload_max_waiting waiting.
    trace_threads: int = 2

    # Gradient descent (/api/descend): steps × the graph's work of one request (a call of the
    # program's function counts as its body's nodes × CALL_COST_BUILT, engine/functions.py).
    # Each step rebuilds the graph and runs its backward pass, 10 to 13 µs a node on the 2-core
    # test machine: 2,000,000 took 25 to 75 s, 200,000 takes 2 to 3 s (docs/api.md, "Limits").
    # The page's Play asks for 10 steps at a time: 10 steps of a 20,000-node graph fit.
    descend_max_node_steps: int = 200_000
    # The loss landscape (/api/landscape): grid points × the graph's work of one request (one
    # forward pass of the nodes each point, a call counting as its body's nodes ×
    # CALL_COST_RECOMPUTED; about half a second of work at 400,000 on the 2-core test machine).
    landscape_max_node_points: int = 400_000

    # Export draws every node with dot, so it has its own ceiling. Above export_max_lanes (see
    # dot_max_lanes) the layered fallback places the cards and Graphviz only draws them; a PNG
    # is scaled down to at most export_png_max_pixels (its bitmap alone is 4 bytes a pixel).
    export_timeout_s: float = 10.0
    export_max_nodes: int = 2_000
    export_max_lanes: int = 100_000
    export_png_max_pixels: int = 8_000_000

    # Requests per minute per client address on /api/ (each worker counts on its own; behind a
    # proxy, uvicorn --proxy-headers makes the address the real client's); 0 means no limit.
    rate_limit_per_minute: int = 0

    # Live classes (docs/live-class.md). Without a Redis URL one process holds every class (run
    # one worker); with it, every worker and replica sharing that Redis serves every class, and
    # layouts are shared through it too.
    redis_url: str | None = None
    class_max_students: int = 1_000
    # Students of one class joined from one client address (a classroom behind one NAT is one
    # address): the largest lecture hall expected behind one, and below the class's cap, so one
    # address never fills a class alone (docs/live-class.md, Safety).
    class_max_students_per_address: int = 300
    # Class sockets one client address may open in 2 s, per process; past it a socket is
    # refused before the handshake's answer (the page retries in 0.25-2 s). As many as the
    # address may have students: a room behind one NAT reconnecting at once (a server restart)
    # fits; a script's 2,000 sockets cost the server a handshake each, not a session
    # (bench/classroom.py flood).
    class_sockets_per_address_per_2s: int = 300
    class_idle_expiry_s: int = 4 * 3600  # a class ends this long after the teacher's last move
    class_max_classes: int = 10_000  # per process, without Redis
    class_queue_size: int = 32  # messages waiting for one client; beyond, it is dropped
    class_join_guesses_per_minute: int = 20  # unknown codes tried, per client address
    class_creations_per_minute: int = 20  # classes started, per client address (all workers)
    class_creations_per_process_minute: int = 300  # classes started through this process
    # The layout cache's Redis (default: `redis_url`). compose.yaml gives it a Redis of its own
    # that may evict (allkeys-lru), so the classes' Redis never evicts (noeviction).
    layout_cache_redis_url: str | None = None
    layout_cache_ttl_s: int = 7 * 24 * 3600  # layouts kept in Redis

    # Where big static files (Pyodide's WebAssembly) are kept gzipped, made once when first asked
    # for (app/http/precompressed.py); default: chainrule-precompressed in the system's temporary
    # folder. `precompress_static=False` sends them as they are (the middleware gzips them on every
    # request, as before: bench/sandbox.py's "before").
    precompressed_dir: Path | None = None
    precompress_static: bool = True

    # The lessons' data files (one JSON file per lesson); default: `lessons/` of the checkout.
    lessons_dir: Path | None = None

    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 1


@lru_cache
def get_settings() -> AppSettings:
    """The process-wide settings, read once from the environment."""
    return AppSettings()
