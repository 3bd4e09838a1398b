"""chainrule's engine: a program becomes a Value graph, a forward/backward timeline and a
gradient check. Pure Python; knows nothing of HTTP or HTML."""

from .builder import Graph, Limits
from .descend import MAX_STEPS as MAX_DESCENT_STEPS
from .descend import Descent, descend
from .errors import (
    ArgumentCount,
    AssignedTwice,
    BadFunction,
    BadLandscape,
    BadLeaf,
    BadOrder,
    BadTarget,
    BadTraining,
    BadValue,
    BadWrt,
    LimitExceeded,
    NeedsRunning,
    ProgramError,
    SyntaxError_,
    TensorProgram,
    UnknownFunction,
    UseBeforeAssign,
)
from .landscape import MAX_POINTS as MAX_LANDSCAPE_POINTS
from .landscape import Landscape, landscape
from .options import Options
from .presets import PRESETS, TENSOR_PRESETS
from .tensors import ShapeError
from .tracing import ForwardBackward, Trace, build_graph, forward_backward, numbers, run, trace
from .value import Value

__all__ = [
    "Options",
    "ArgumentCount",
    "AssignedTwice",
    "BadFunction",
    "BadLandscape",
    "BadLeaf",
    "BadOrder",
    "BadTarget",
    "BadTraining",
    "Descent",
    "MAX_DESCENT_STEPS",
    "BadValue",
    "BadWrt",
    "ForwardBackward",
    "Graph",
    "Landscape",
    "LimitExceeded",
    "Limits",
    "MAX_LANDSCAPE_POINTS",
    "NeedsRunning",
    "PRESETS",
    "TENSOR_PRESETS",
    "ProgramError",
    "ShapeError",
    "SyntaxError_",
    "TensorProgram",
    "Trace",
    "UnknownFunction",
    "UseBeforeAssign",
    "Value",
    "build_graph",
    "descend",
    "forward_backward",
    "landscape",
    "numbers",
    "run",
    "trace",
]
