"""Jobs for tests/app/test_offload.py's helper processes (importable without pytest)."""

from __future__ import annotations

from typing import Any


def log_name(log: Any, name: str) -> str:
    """Append `name` to the shared `log` (a Manager list): the order jobs ran in."""
    log.append(name)
    return name


def wait_then_log(gate: Any, log: Any, name: str) -> str:
    """Hold a helper process until `gate` (a Manager event) is set, then log `name`."""
    gate.wait(60)
    return log_name(log, name)
