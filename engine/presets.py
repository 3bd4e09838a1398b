"""The example programs of the seeds and PRODUCT §4, as data, and the tensor programs of issue
43 after them. The page opens on the first. Their titles and notes are in the catalogues
(`preset.<id>.title`, `preset.<id>.note`)."""

from __future__ import annotations

from typing import Any

from .i18n import DEFAULT_LANG, check_lang, text

_PROGRAMS: list[dict[str, Any]] = [
    {
        "id": "add-mul",
        "source": "a = 2\nb = -3\nc = 10\ne = a + b\nf = e * c",
        "values": {},
    },
    {
        "id": "neuron",
        "source": (
            "x1 = 2\nx2 = 0\nw1 = -3\nw2 = 1\nb = 6.8813735870195432\n"
            "x1w1 = x1 * w1\nx2w2 = x2 * w2\nx1w1x2w2 = x1w1 + x2w2\n"
            "n = x1w1x2w2 + b\no = tanh(n)"
        ),
        "values": {},
    },
    {
        "id": "square",
        "source": "a = 3\nb = a * a",
        "values": {},
    },
    {
        "id": "diamond",
        "source": "a = 2\nb = a + 1\nc = a * 3\nd = b * c",
        "values": {},
    },
    {
        "id": "shared",
        "source": "a = 2\nb = 3\nc = a * b\nL = c + a",
        "values": {},
    },
    {
        "id": "relu",
        "source": "a = 2\nb = -3\nd = 10\nc = a * b\ne = c + d\nf = relu(e)",
        "values": {},
    },
    {
        "id": "double",
        "source": "a = 3\nb = a + a",
        "values": {},
    },
    {
        "id": "shared-variable",
        "source": "a = -2\nb = 3\nd = a * b\ne = a + b\nf = d * e",
        "values": {},
    },
    {
        "id": "sigmoid-neuron",
        "source": "x = 1.5\nw = -0.8\nb = 0.3\nz = w * x + b\no = sigmoid(z)",
        "values": {},
    },
    {
        "id": "softplus",
        "source": "x = 0.5\nu = exp(x)\nv = u + 1\ny = log(v)",
        "values": {},
    },
    {
        "id": "division",
        "source": "x = 3\np = x - 1\nq = x + 1\ny = p / q",
        "values": {},
    },
    {
        "id": "power",
        "source": "a = 2\nb = 3\nc = a ** b",
        "values": {},
    },
    {
        "id": "mse",
        "source": "x = 2\nw = 0.5\ny = 3\npred = w * x\nerr = pred - y\nloss = err ** 2",
        "values": {},
    },
    {
        "id": "line-fit",
        "source": (
            "w = 0\nb = 0\n"
            "x1 = 1\ny1 = 3\nx2 = 2\ny2 = 5\nx3 = 3\ny3 = 7.5\nx4 = 4\ny4 = 9\n"
            "loss = (w*x1 + b - y1)**2 + (w*x2 + b - y2)**2 + (w*x3 + b - y3)**2"
            " + (w*x4 + b - y4)**2"
        ),
        "values": {},
    },
    {
        "id": "layer",
        "source": (
            "x1 = 0.5\nx2 = -1.0\n"
            "w11 = 0.4\nw12 = -0.6\nb1 = 0.1\n"
            "w21 = -0.3\nw22 = 0.8\nb2 = 0.0\n"
            "w31 = 0.9\nw32 = 0.2\nb3 = -0.2\n"
            "h1 = tanh(w11*x1 + w12*x2 + b1)\nh2 = tanh(w21*x1 + w22*x2 + b2)\n"
            "h3 = tanh(w31*x1 + w32*x2 + b3)\nout = h1 + h2 + h3"
        ),
        "values": {},
    },
    {
        "id": "mlp",
        "source": (
            "x1 = 0.5\nx2 = -1.5\n"
            "w11 = 0.3\nw12 = -0.8\nb1 = 0.1\nw21 = 0.6\nw22 = 0.2\nb2 = -0.3\n"
            "v1 = 0.7\nv2 = -0.5\nc = 0.05\ny = 1\n"
            "h1 = tanh(w11*x1 + w12*x2 + b1)\nh2 = tanh(w21*x1 + w22*x2 + b2)\n"
            "out = tanh(v1*h1 + v2*h2 + c)\nloss = (out - y)**2"
        ),
        "values": {},
    },
    {
        "id": "four-examples",
        "source": (
            "w1 = 0.5\nw2 = -0.3\nw3 = 0.2\nb = 0.1\n"
            "x11 = 2\nx12 = 3\nx13 = -1\ny1 = 1\n"
            "x21 = 3\nx22 = -1\nx23 = 0.5\ny2 = -1\n"
            "x31 = 0.5\nx32 = 1\nx33 = 1\ny3 = -1\n"
            "x41 = 1\nx42 = 1\nx43 = -1\ny4 = 1\n"
            "p1 = tanh(w1*x11 + w2*x12 + w3*x13 + b)\n"
            "p2 = tanh(w1*x21 + w2*x22 + w3*x23 + b)\n"
            "p3 = tanh(w1*x31 + w2*x32 + w3*x33 + b)\n"
            "p4 = tanh(w1*x41 + w2*x42 + w3*x43 + b)\n"
            "loss = (p1 - y1)**2 + (p2 - y2)**2 + (p3 - y3)**2 + (p4 - y4)**2"
        ),
        "values": {},
    },
    {
        "id": "deep-tanh",
        "source": (
            "x = 2\n"
            "h1 = tanh(2*x)\n"
            "h2 = tanh(2*h1)\n"
            "h3 = tanh(2*h2)\n"
            "h4 = tanh(2*h3)\n"
            "h5 = tanh(2*h4)\n"
            "h6 = tanh(2*h5)\n"
            "h7 = tanh(2*h6)\n"
            "h8 = tanh(2*h7)\n"
            "h9 = tanh(2*h8)\n"
            "h10 = tanh(2*h9)"
        ),
        "values": {},
    },
    {
        "id": "deep-relu",
        "source": (
            "x = 2\n"
            "h1 = relu(2*x)\n"
            "h2 = relu(2*h1)\n"
            "h3 = relu(2*h2)\n"
            "h4 = relu(2*h3)\n"
            "h5 = relu(2*h4)\n"
            "h6 = relu(2*h5)\n"
            "h7 = relu(2*h6)\n"
            "h8 = relu(2*h7)\n"
            "h9 = relu(2*h8)\n"
            "h10 = relu(2*h9)"
        ),
        "values": {},
    },
]


# Tensor programs (docs/tensors.md): the menu lists them after the scalar ones.
_TENSOR_PROGRAMS: list[dict[str, Any]] = [
    {
        "id": "tensor-mlp",
        "source": (
            "X = tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]])\n"
            "W = tensor([[0.1, -0.2, 0.3], [0.4, 0.0, -0.5]])\n"
            "b = tensor([0.1, 0.1, 0.1])\n"
            "W2 = randn(3, 3, seed=1)\n"
            "h = tanh(X @ W + b)\n"
            "loss = cross_entropy(h @ W2, tensor([2, 0, 1]))"
        ),
        "values": {},
    },
    # The tensor lessons' programs (lessons/tensor-*.json): small enough that every number fits
    # in its cell. `G` is the gradient sent back into `Z` (`loss = (Z * G).sum()`: dZ = G).
    {
        "id": "tensor-broadcast",
        "source": (
            "X = tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]])\n"
            "W = tensor([[0.5, -1.0, 0.0], [1.0, 0.5, -0.5]])\n"
            "b = tensor([0.1, -0.2, 0.3])\n"
            "G = tensor([[1.0, 0.0, -1.0], [0.5, 2.0, 0.0], [-1.0, 1.0, 0.5]])\n"
            "Z = X @ W + b\n"
            "loss = (Z * G).sum()"
        ),
        "values": {},
    },
    {
        "id": "tensor-matmul",
        "source": (
            "X = tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]])\n"
            "W = tensor([[0.5, -1.0, 0.0], [1.0, 0.5, -0.5]])\n"
            "G = tensor([[1.0, 0.0, -1.0], [0.5, 2.0, 0.0], [-1.0, 1.0, 0.5]])\n"
            "Y = X @ W\n"
            "loss = (Y * G).sum()"
        ),
        "values": {},
    },
    # The same loss twice, fused and by hand, added: `logits` is read by both, so each passes
    # its own gradient and the two arrive side by side (and add: a reused tensor).
    {
        "id": "tensor-softmax-ce",
        "source": (
            "X = tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]])\n"
            "W = tensor([[0.5, -1.0, 0.0], [1.0, 0.5, -0.5]])\n"
            "Y = tensor([2, 0, 1])\n"
            "logits = X @ W\n"
            "fused = cross_entropy(logits, Y)\n"
            "p = softmax(logits, 1)\n"
            "unfused = -log(p[arange(3), Y]).mean()\n"
            "loss = fused + unfused"
        ),
        "values": {},
    },
]


def presets(lang: str = DEFAULT_LANG, *, tensors: bool = True) -> list[dict[str, Any]]:
    """Every preset, `{id, title, source, values, note}`, its title and note in `lang`: the
    scalar programs, then (unless `tensors` is false) the tensor programs."""
    check_lang(lang)
    programs = _PROGRAMS + (_TENSOR_PROGRAMS if tensors else [])
    return [
        {
            "id": program["id"],
            "title": text(lang, f"preset.{program['id']}.title"),
            "source": program["source"],
            "values": dict(program["values"]),
            "note": text(lang, f"preset.{program['id']}.note"),
        }
        for program in programs
    ]


# In English: the scalar programs (what the scalar features run), and the tensor programs.
PRESETS = presets(tensors=False)
TENSOR_PRESETS = presets()[len(PRESETS) :]
