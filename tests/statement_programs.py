"""Programs of a given shape for the tests and benchmarks of statement groups (issue 11)."""

from __future__ import annotations


def layered_program(statements: int = 60, leaves: int = 10) -> str:
    """`leaves` declared leaves, then statements that each mix two weighted leaves with the last
    one or two results: `h7 = tanh(0.8*x7 + 0.9*x8 + 0.5*h6 + 0.25*h5)`. With the defaults: 60
    statements and about 500 nodes, every leaf declared (so one card per statement when every
    group is collapsed)."""
    lines = [f"x{i} = {(i % 5 - 2) / 4}" for i in range(leaves)]
    for k in range(statements - leaves):
        terms = [f"0.{(k + j) % 9 + 1}*x{(k + j) % leaves}" for j in range(2)]
        terms.append(f"0.5*h{k - 1}" if k >= 1 else "0.5*x5")
        if k % 2 == 0:
            terms.append(f"0.25*h{k - 2}" if k >= 2 else "0.25*x6")
        lines.append(f"h{k} = tanh({' + '.join(terms)})")
    return "\n".join(lines)
