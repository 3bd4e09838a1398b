"""chainrule's own random numbers: the same numbers in Python, in the page and in any language
with 32-bit integers and IEEE doubles, for a seed (docs/tensors.md, "Random numbers").

The stream is mulberry32 (Tommy Ettinger's 32-bit generator, a handful of integer operations):
each draw is a uniform `u = k / 2**32`, `k` a 32-bit integer. A normal number is the sum of twelve
uniforms minus 6 (Irwin–Hall: mean 0, variance exactly 1, always within ±6), which IEEE adds
exactly (twelve numbers of 32 fraction bits fit a double's 53), so no `log` or `cos` of a
platform's own rounding enters: `randn` is bit-identical everywhere. It is not PyTorch's stream:
`torch.randn(3, 2, generator=g)` reads here with these numbers (the reply's warning says so).
"""

from __future__ import annotations

_MASK = 0xFFFFFFFF
_TWO_32 = 4294967296.0
NORMAL_TERMS = 12  # uniforms summed for one normal number (Irwin–Hall)


class Generator:
    """A stream of numbers from a seed (any integer: its low 32 bits)."""

    __slots__ = ("seed", "state")

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.state = seed & _MASK

    def manual_seed(self, seed: int) -> Generator:
        """Restart the stream at `seed` (PyTorch's spelling); returns the generator."""
        self.seed = seed
        self.state = seed & _MASK
        return self

    def next_uint32(self) -> int:
        """The next 32-bit integer of mulberry32."""
        self.state = state = (self.state + 0x6D2B79F5) & _MASK
        t = ((state ^ (state >> 15)) * (1 | state)) & _MASK
        t = ((t + (((t ^ (t >> 7)) * (61 | t)) & _MASK)) & _MASK) ^ t
        return (t ^ (t >> 14)) & _MASK

    def uniform(self) -> float:
        """The next uniform number in [0, 1): k / 2**32."""
        return self.next_uint32() / _TWO_32

    def normal(self) -> float:
        """The next standard normal number (Irwin–Hall: twelve uniforms, minus 6)."""
        total = 0.0
        for _ in range(NORMAL_TERMS):
            total += self.next_uint32() / _TWO_32
        return total - 6.0

    def integer(self, low: int, high: int) -> int:
        """The next integer in [low, high): low + floor(u · (high − low))."""
        return low + int(self.uniform() * (high - low))
