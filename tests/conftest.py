"""Fixtures shared by every test folder: a real uvicorn server on a free loopback port (started by
tests/servers.py), and an in-process client of a fresh app with settings to taste."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from servers import REDIS_SERVER, ServerUrl, start_redis, start_server, stop_server
from written_statements import checked_parsed

# Several strategies build and trace whole programs while they draw (the engine is the oracle's
# input), so how long a draw takes says how busy the machine is, not that a strategy is wrong:
# Hypothesis' "input generation is slow" check failed four tests on a loaded 2-core machine.
settings.register_profile("chainrule", suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("chainrule")


# The order the layers' files are handed to the workers in (Makefile: --no-loadscope-reorder):
# a browser file takes 2–60 s, an engine file well under one, so the slow ones go first and the
# run ends on short files instead of one worker running JupyterLab while the other waits.
LAYER_ORDER = ("browser", "sandbox", "scenarios", "app", "docs", "engine")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def layer(item: pytest.Item) -> int:
        parts = Path(item.path).relative_to(Path(__file__).parent).parts
        return LAYER_ORDER.index(parts[0]) if parts[0] in LAYER_ORDER else len(LAYER_ORDER)

    items.sort(key=layer)  # stable: a file's tests keep their order


@pytest.fixture(autouse=True, scope="session")
def written_statements_checked() -> Iterator[None]:
    """Every program the value reader writes and the suite traces in this process is parsed too,
    and the statements the reader wrote for it held against the parser's (tests/
    written_statements.py): the builder reads the written ones."""
    from chainrule.engine import tracing

    parsed = tracing.parsed
    tracing.parsed = checked_parsed(parsed)
    try:
        yield
    finally:
        tracing.parsed = parsed


@pytest.fixture(scope="session")
def live_server() -> Iterator[str]:
    """Base URL of a real server shared by the whole session (its `.pid`: the server's)."""
    process, base_url = start_server()
    yield ServerUrl(base_url, process.pid)
    stop_server(process)


@pytest.fixture
def make_client() -> Iterator[Callable[..., Any]]:
    """`make_client(max_nodes=10)`: a TestClient of a new app with those settings changed.

    Server exceptions become responses (as in production), so a 500 fails on its status code.
    """
    from fastapi.testclient import TestClient

    from chainrule.app.main import create_app
    from chainrule.app.settings import AppSettings

    clients: list[TestClient] = []

    def make(**overrides: Any) -> TestClient:
        client = TestClient(create_app(AppSettings(**overrides)), raise_server_exceptions=False)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.app.state.server.close()
        client.close()


@pytest.fixture
def client(make_client: Callable[..., Any]) -> Any:
    """A TestClient of a new app with default settings."""
    return make_client()


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """The URL of a Redis shared by the session (`make test-deps` installs redis-server)."""
    if not Path(REDIS_SERVER).exists():
        pytest.skip(f"{REDIS_SERVER} is missing (make test-deps installs it)")
    process, url = start_redis()
    yield url
    stop_server(process)


class RestartableRedis:
    """A redis-server of a test's own, persisted as the deployment persists it (compose.yaml:
    append-only, fsync before each reply), that the test stops and starts again on its port."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.process, self.url = start_redis(data_dir=data_dir)
        self.port = int(self.url.rsplit(":", 1)[1].split("/")[0])

    def stop(self) -> None:
        """SIGTERM, as `systemctl restart` or `docker restart` sends it; its clients see the
        connections close."""
        stop_server(self.process)

    def start(self) -> None:
        self.process, _ = start_redis(port=self.port, data_dir=self.data_dir)


@pytest.fixture
def own_redis(tmp_path) -> Iterator[RestartableRedis]:
    if not Path(REDIS_SERVER).exists():
        pytest.skip(f"{REDIS_SERVER} is missing (make test-deps installs it)")
    server = RestartableRedis(tmp_path)
    yield server
    server.stop()


@pytest.fixture
def kernel_sized_heap() -> Iterator[None]:
    """The objects the test process holds (half a million after a few thousand tests) frozen out
    of the collector's view (gc.freeze) while a test reads Values many times: the reader's
    collection (engine/value_reader.py `wrapped_numbers`) visits every tracked object, 0.8 s a
    read here against 30 ms in a fresh interpreter, which is what a learner's kernel is.
    Objects made during the test are seen as usual."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
