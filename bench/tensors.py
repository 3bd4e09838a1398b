"""Benchmark of tensor programs (issue 43): makemore's MLP at its exercise's sizes (batch 32,
vocabulary 27, embedding 10, block 3, hidden 64: 17,669 elements, about 248,000 scalar nodes).

Run: .venv/bin/python bench/tensors.py    Prints a markdown table.
Measures: POST /api/graph against a real uvicorn server (one worker) on loopback, cold (each
round draws other numbers, `manual_seed(…)` changed, so the response cache cannot answer),
and in-process the engine's share: reading, building and the backward pass (`trace_tensors`),
and writing and encoding the reply (`tensor_reply`, orjson). Target: cold ≤ 1 s.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import httpx
import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from servers import start_server, stop_server  # noqa: E402

from chainrule.engine.builder import Limits  # noqa: E402
from chainrule.engine.tensor_program import trace_tensors  # noqa: E402
from chainrule.engine.tensor_reply import tensor_reply  # noqa: E402

ROUNDS = 10
SERVER = Limits(100_000, 20_000, 200)


# makemore's MLP exercise (part 3): batch, vocabulary, embedding, block, hidden.
BATCH, VOCABULARY, EMBEDDING, BLOCK, HIDDEN = 32, 27, 10, 3, 64


def makemore(seed: int) -> str:
    """makemore's MLP cell (part 3's batch of 32), straight-line; the seed its generator's."""
    return f"""import torch
import torch.nn.functional as F
g = torch.Generator().manual_seed({seed})
C = torch.randn(({VOCABULARY}, {EMBEDDING}), generator=g)
W1 = torch.randn(({BLOCK * EMBEDDING}, {HIDDEN}), generator=g) * 0.2
b1 = torch.randn({HIDDEN}, generator=g) * 0.01
W2 = torch.randn(({HIDDEN}, {VOCABULARY}), generator=g) * 0.1
b2 = torch.randn({VOCABULARY}, generator=g) * 0.1
Xb = torch.randint(0, {VOCABULARY}, ({BATCH}, {BLOCK}), generator=g)
Yb = torch.randint(0, {VOCABULARY}, ({BATCH},), generator=g)
emb = C[Xb]
embcat = emb.view(emb.shape[0], -1)
hpreact = embcat @ W1 + b1
h = torch.tanh(hpreact)
logits = h @ W2 + b2
loss = F.cross_entropy(logits, Yb)
loss.backward()
"""


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f}"


def main() -> None:
    engine_times, reply_times, sizes = [], [], []
    for round_ in range(ROUNDS):
        started = time.perf_counter()
        trace = trace_tensors(makemore(round_), limits=SERVER)
        built = time.perf_counter()
        body = orjson.dumps(tensor_reply(trace))
        engine_times.append(built - started)
        reply_times.append(time.perf_counter() - built)
        sizes.append(len(body))
    process, base_url = start_server()
    try:
        cold = []
        with httpx.Client(base_url=base_url, timeout=60) as client:
            client.post("/api/graph", json={"source": "a = 2\nb = a * 3"})  # the worker is up
            for round_ in range(ROUNDS):
                started = time.perf_counter()
                response = client.post("/api/graph", json={"source": makemore(1000 + round_)})
                cold.append(time.perf_counter() - started)
                assert response.status_code == 200, response.text[:300]
    finally:
        stop_server(process)
    elements, nodes = trace.elements.element_count, len(trace.elements.nodes)
    size = statistics.median(sizes)
    print(f"makemore's MLP: {elements:,} elements, {nodes:,} scalar nodes, reply {size:,.0f} B")
    print()
    print("| what | p50 ms | max ms |")
    print("| --- | --- | --- |")
    for name, samples in (
        ("POST /api/graph, cold (HTTP, one worker)", cold),
        ("read + build + backward (trace_tensors)", engine_times),
        ("reply + encode (tensor_reply, orjson)", reply_times),
    ):
        print(f"| {name} | {ms(statistics.median(samples))} | {ms(max(samples))} |")


if __name__ == "__main__":
    main()
