"""The engine's numbers: the functions Python's `/`, `**` and `math` raise on, as IEEE 754
computes them (overflow gives ±inf, a domain error nan), and the warning each failure earns.

These functions are the primitives of the formula language (engine/formulas.py). The micrograd
scripts the page writes carry their source (`formulas.python_helpers`), so a script computes
exactly what the engine does. Each is therefore self-contained: it needs only `math`."""

from __future__ import annotations

import math


def divide(x: float, y: float) -> float:
    """x / y with x / ±0 = ±inf and 0 / 0 = nan, as IEEE 754 divides."""
    if y == 0:
        if x == 0 or x != x:
            return math.nan
        return math.copysign(math.inf, x) * math.copysign(1.0, y)
    return x / y


def power(x: float, y: float) -> float:
    """x ** y as IEEE 754 (C's pow) computes it: overflow gives ±inf, 0 ** negative gives inf
    (−inf for −0 and an odd exponent), a negative base with a fractional exponent gives nan
    (never a complex number)."""
    try:
        return math.pow(x, y)
    except OverflowError:
        odd = math.isfinite(y) and y == int(y) and int(y) % 2 == 1
        return -math.inf if x < 0 and odd else math.inf
    except ValueError:
        if x == 0:
            odd = math.isfinite(y) and y == int(y) and int(y) % 2 == 1
            return math.copysign(math.inf, x) if odd else math.inf
        return math.nan


def exp(x: float) -> float:
    """e ** x, inf when it overflows."""
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def log(x: float) -> float:
    """The natural logarithm: log(0) = −inf, nan below 0."""
    if x > 0:
        return math.log(x)
    return -math.inf if x == 0 else math.nan


def sin(x: float) -> float:
    """The sine, nan at ±inf."""
    return math.sin(x) if math.isfinite(x) else math.nan


def cos(x: float) -> float:
    """The cosine, nan at ±inf."""
    return math.cos(x) if math.isfinite(x) else math.nan


# The warning a non-finite result of each is blamed on (asked only when the result is not
# finite): `division_by_zero`, `overflow` or `domain`.


def divide_warning(x: float, y: float) -> str | None:
    return "division_by_zero" if y == 0 else None


def power_warning(x: float, y: float) -> str | None:
    try:
        math.pow(x, y)
    except OverflowError:
        return "overflow"
    except ValueError:
        return "division_by_zero" if x == 0 else "domain"
    return None


def exp_warning(x: float) -> str | None:
    return "overflow" if math.isfinite(x) and exp(x) == math.inf else None


def log_warning(x: float) -> str | None:
    if x == 0:
        return "division_by_zero"
    return "domain" if x < 0 else None
