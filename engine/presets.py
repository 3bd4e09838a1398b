"""The example programs of the seeds and PRODUCT §4, as data. The page opens on the first."""

from __future__ import annotations

from typing import Any

PRESETS: list[dict[str, Any]] = [
    {
        "id": "add-mul",
        "title": "(a + b) · c",
        "source": "a = 2\nb = -3\nc = 10\ne = a + b\nf = e * c",
        "values": {},
        "note": "The smallest chain rule: grad[e] = c = 10, and e passes it to a and b unchanged.",
    },
    {
        "id": "neuron",
        "title": "A tanh neuron",
        "source": (
            "x1 = 2\nx2 = 0\nw1 = -3\nw2 = 1\nb = 6.8813735870195432\n"
            "x1w1 = x1 * w1\nx2w2 = x2 * w2\nx1w1x2w2 = x1w1 + x2w2\n"
            "n = x1w1x2w2 + b\no = tanh(n)"
        ),
        "values": {},
        "note": "micrograd's neuron: tanh(n) = 0.7071, so grad[n] = 1 − 0.5 = 0.5.",
    },
    {
        "id": "square",
        "title": "a · a",
        "source": "a = 3\nb = a * a",
        "values": {},
        "note": "One node used twice: two edges, two contributions of 3, grad[a] = 6.",
    },
    {
        "id": "diamond",
        "title": "The diamond",
        "source": "a = 2\nb = a + 1\nc = a * 3\nd = b * c",
        "values": {},
        "note": "a reaches d along two paths: grad[a] = 6·1 + 3·3 = 15, if both arrive in time.",
    },
    {
        "id": "shared",
        "title": "c = a · b; L = c + a",
        "source": "a = 2\nb = 3\nc = a * b\nL = c + a",
        "values": {},
        "note": "The sort trace of the MicroGPT chapter: grad[a] = 1 + 3 = 4 with +=, 3 with =.",
    },
    {
        "id": "relu",
        "title": "relu(a · b + d)",
        "source": "a = 2\nb = -3\nd = 10\nc = a * b\ne = c + d\nf = relu(e)",
        "values": {},
        "note": "e = 4 > 0, so relu passes gradient through; drag a until e < 0 and it dies.",
    },
    {
        "id": "double",
        "title": "a + a",
        "source": "a = 3\nb = a + a",
        "values": {},
        "note": (
            "The = bug: the second contribution overwrites the first, grad[a] = 1 instead of 2."
        ),
    },
    {
        "id": "shared-variable",
        "title": "(a · b) · (a + b)",
        "source": "a = -2\nb = 3\nd = a * b\ne = a + b\nf = d * e",
        "values": {},
        "note": "a and b each feed two paths: grad[a] = e·b + d = -3, grad[b] = e·a + d = -8.",
    },
    {
        "id": "sigmoid-neuron",
        "title": "A sigmoid neuron",
        "source": "x = 1.5\nw = -0.8\nb = 0.3\nz = w * x + b\no = sigmoid(z)",
        "values": {},
        "note": "sigmoid'(z) = s(1 − s): at most 0.25, so gradients shrink passing through it.",
    },
    {
        "id": "softplus",
        "title": "log(1 + exp(x))",
        "source": "x = 0.5\nu = exp(x)\nv = u + 1\ny = log(v)",
        "values": {},
        "note": "exp passes e^x, log passes 1/v: together grad[x] = sigmoid(x).",
    },
    {
        "id": "division",
        "title": "(x − 1) / (x + 1)",
        "source": "x = 3\np = x - 1\nq = x + 1\ny = p / q",
        "values": {},
        "note": (
            "Derived ops: − and / are single nodes; switch on expand to "
            "see a + b·(−1) and a·b^(−1)."
        ),
    },
    {
        "id": "power",
        "title": "a ** b",
        "source": "a = 2\nb = 3\nc = a ** b",
        "values": {},
        "note": "A variable exponent: grad[a] = b·a^(b−1) = 12, grad[b] = a^b·ln a = 8 ln 2.",
    },
    {
        "id": "mse",
        "title": "Squared error",
        "source": "x = 2\nw = 0.5\ny = 3\npred = w * x\nerr = pred - y\nloss = err ** 2",
        "values": {},
        "note": "The loss of one example: grad[w] = 2·err·x = -8, so increasing w lowers the loss.",
    },
    {
        "id": "line-fit",
        "title": "Fit a line to four points",
        "source": (
            "w = 0\nb = 0\n"
            "x1 = 1\ny1 = 3\nx2 = 2\ny2 = 5\nx3 = 3\ny3 = 7.5\nx4 = 4\ny4 = 9\n"
            "loss = (w*x1 + b - y1)**2 + (w*x2 + b - y2)**2 + (w*x3 + b - y3)**2"
            " + (w*x4 + b - y4)**2"
        ),
        "values": {},
        "note": (
            "Train w and b in the Train lab: try lr 0.01 (the loss falls to about 0.18, "
            "w ≈ 2, b ≈ 1), then 0.05 (each step overshoots and the loss climbs)."
        ),
    },
    {
        "id": "layer",
        "title": "A layer of three neurons",
        "source": (
            "x1 = 0.5\nx2 = -1.0\n"
            "w11 = 0.4\nw12 = -0.6\nb1 = 0.1\n"
            "w21 = -0.3\nw22 = 0.8\nb2 = 0.0\n"
            "w31 = 0.9\nw32 = 0.2\nb3 = -0.2\n"
            "h1 = tanh(w11*x1 + w12*x2 + b1)\nh2 = tanh(w21*x1 + w22*x2 + b2)\n"
            "h3 = tanh(w31*x1 + w32*x2 + b3)\nout = h1 + h2 + h3"
        ),
        "values": {},
        "note": (
            "x1 feeds all three neurons, so grad[x1] arrives in three parts, "
            "0.898 − 0.136 + 0.195 = 0.957; h3 ≈ 0, so its tanh passes nearly all of w31."
        ),
    },
    {
        "id": "mlp",
        "title": "A 2-2-1 MLP on one example",
        "source": (
            "x1 = 0.5\nx2 = -1.5\n"
            "w11 = 0.3\nw12 = -0.8\nb1 = 0.1\nw21 = 0.6\nw22 = 0.2\nb2 = -0.3\n"
            "v1 = 0.7\nv2 = -0.5\nc = 0.05\ny = 1\n"
            "h1 = tanh(w11*x1 + w12*x2 + b1)\nh2 = tanh(w21*x1 + w22*x2 + b2)\n"
            "out = tanh(v1*h1 + v2*h2 + c)\nloss = (out - y)**2"
        ),
        "values": {},
        "note": (
            "Two tanh neurons feed a third. Gradient map on at the end: of the weights and "
            "biases, c and v1 get the largest gradients, w11 the smallest (each tanh's 1 − h² "
            "shrinks what reaches the first layer). Train it: lr 0.01, then 0.5."
        ),
    },
    {
        "id": "four-examples",
        "title": "Squared loss over four examples",
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
        "note": (
            "One tanh neuron, micrograd's four examples: each weight sums one contribution per "
            "example, grad[w1] = −4 + 0.83 + 1.17 − 1.78. Example 2 is the most wrong, yet its "
            "saturated tanh passes little."
        ),
    },
]
