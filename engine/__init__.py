"""chainrule's engine: a program becomes a Value graph, a forward/backward timeline and a
gradient check. Pure Python; knows nothing of HTTP or HTML."""

from .errors import (
    ArgumentCount,
    AssignedTwice,
    BadOrder,
    BadValue,
    LimitExceeded,
    ProgramError,
    SyntaxError_,
    UnknownFunction,
    UseBeforeAssign,
)
from .graph import Graph, Limits
from .presets import PRESETS
from .run import ForwardBackward, Trace, build_graph, forward_backward, trace
from .value import Value

__all__ = [
    "ArgumentCount",
    "AssignedTwice",
    "BadOrder",
    "BadValue",
    "ForwardBackward",
    "Graph",
    "LimitExceeded",
    "Limits",
    "PRESETS",
    "ProgramError",
    "SyntaxError_",
    "Trace",
    "UnknownFunction",
    "UseBeforeAssign",
    "Value",
    "build_graph",
    "forward_backward",
    "trace",
]
