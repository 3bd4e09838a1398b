"""Boxes on the page ({left, top, right, bottom} in CSS px), shared by the browser tests."""

from __future__ import annotations


def inside(inner: dict, outer: dict, slack: float = 0.5) -> bool:
    """Whether box `inner` lies within box `outer`, give or take `slack` px."""
    return (
        inner["left"] >= outer["left"] - slack
        and inner["top"] >= outer["top"] - slack
        and inner["right"] <= outer["right"] + slack
        and inner["bottom"] <= outer["bottom"] + slack
    )
