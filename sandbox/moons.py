"""micrograd's `demo.ipynb`, without scikit-learn or numpy: its data and its loss.

The demo trains `MLP(2, [16, 16, 1])` on `make_moons(n_samples=100, noise=0.1)` from
scikit-learn, with labels -1 and 1, and a max-margin loss with L2 regularisation. Its
`total_loss` over the 100 points is a graph of 65,818 Values. The sandbox has neither
scikit-learn nor numpy, and tests and benchmarks should not need them either, so `make_moons`
here computes scikit-learn's formula (sklearn/datasets/_samples_generator.py) with Python's own
seeded generator:

- the first `n_samples // 2` points lie on the upper half circle, `(cos t, sin t)`, and the
  rest on the lower one shifted right and down, `(1 - cos t, 1 - sin t - 0.5)`, for `t` evenly
  spaced over `[0, π]` (numpy's `linspace(0, pi, n)`: `t_i = i·π/(n - 1)`; `t = 0` when
  `n == 1`); labels 0 for the first half, 1 for the second;
- the points are shuffled together with their labels (scikit-learn's `shuffle`), then every
  coordinate gets Gaussian noise of standard deviation `noise`.

The shuffle and the noise are drawn from `random.Random(seed)` (`shuffle`, `gauss`), not from
numpy's generator, so the points are the same kind of moons as the notebook's, not the same
numbers; the same `seed` always gives the same points, here and in the browser.
"""

from __future__ import annotations

import math
import random
from typing import Any

SEED = 1337  # the demo's `np.random.seed(1337)` and `random.seed(1337)`
SAMPLES = 100
NOISE = 0.1
ALPHA = 1e-4  # the demo's L2 regularisation strength


def _linspace_pi(count: int) -> list[float]:
    """numpy's `linspace(0, pi, count)`."""
    if count == 1:
        return [0.0]
    step = math.pi / (count - 1)
    return [i * step for i in range(count - 1)] + [math.pi] if count else []


def make_moons(
    n_samples: int = SAMPLES, *, noise: float | None = NOISE, seed: int = SEED
) -> tuple[list[list[float]], list[int]]:
    """Two interleaving half circles, as scikit-learn's `make_moons(n_samples, shuffle=True,
    noise=noise)` computes them (module docstring), drawn from `random.Random(seed)`: the points
    `[x, y]` and their labels (0 or 1)."""
    outer = _linspace_pi(n_samples // 2)
    inner = _linspace_pi(n_samples - n_samples // 2)
    points = [[math.cos(t), math.sin(t)] for t in outer]
    points += [[1 - math.cos(t), 1 - math.sin(t) - 0.5] for t in inner]
    labels = [0] * len(outer) + [1] * len(inner)
    generator = random.Random(seed)
    order = list(range(n_samples))
    generator.shuffle(order)
    points = [points[i] for i in order]
    labels = [labels[i] for i in order]
    if noise is not None:
        points = [
            [x + generator.gauss(0.0, noise), y + generator.gauss(0.0, noise)] for x, y in points
        ]
    return points, labels


def demo_model(seed: int = SEED) -> Any:
    """The demo's model, `MLP(2, [16, 16, 1])` of micrograd (337 parameters), its weights drawn
    after `random.seed(seed)` as the notebook draws them."""
    from micrograd.nn import MLP

    random.seed(seed)
    return MLP(2, [16, 16, 1])


def demo_loss(model: Any, points: list[list[float]], labels: list[int]) -> tuple[Any, float]:
    """The demo's `loss()` on the whole batch, as the notebook computes it: the max-margin loss
    `relu(1 - y·score)` averaged, plus `ALPHA` times the sum of the squared parameters; and the
    accuracy. Labels are the demo's -1 and 1 (`y*2 - 1` of `make_moons`' 0 and 1)."""
    from micrograd.engine import Value

    inputs = [list(map(Value, row)) for row in points]
    scores = list(map(model, inputs))
    losses = [(1 + -yi * scorei).relu() for yi, scorei in zip(labels, scores, strict=True)]
    data_loss = sum(losses) * (1.0 / len(losses))
    reg_loss = ALPHA * sum(p * p for p in model.parameters())
    total_loss = data_loss + reg_loss
    accuracy = [(yi > 0) == (scorei.data > 0) for yi, scorei in zip(labels, scores, strict=True)]
    return total_loss, sum(accuracy) / len(accuracy)


def demo_total_loss(n_samples: int = SAMPLES, seed: int = SEED) -> tuple[Any, Any]:
    """micrograd's demo up to its first `total_loss.backward()`: the model and the total loss of
    `n_samples` moons (100: the demo's 65,818 nodes), its gradients filled."""
    points, labels = make_moons(n_samples, seed=seed)
    model = demo_model(seed)
    total_loss, _ = demo_loss(model, points, [2 * label - 1 for label in labels])
    total_loss.backward()
    return model, total_loss
