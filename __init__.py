"""chainrule: reverse-mode autodiff made visible.

The public API (docs/python.md). A program is our language or micrograd's Python, read as data;
a graph is a micrograd `Value` (or one of ours) after `backward()`:

    >>> import chainrule
    >>> chainrule.trace("a = 2; b = a * a")["nodes"][-1]["grad"]
    1.0
    >>> chainrule.trace("W = randn(2, 3, seed=1); L = (W * W).sum()")["kind"]  # a tensor program
    'tensor'
    >>> chainrule.show(loss)                      # in Jupyter: the player, sliders in the kernel
    >>> chainrule.save_html(loss, "loss.html")    # one self-contained file that plays the trace

Importing chainrule is light: the server, the layout and the widget load when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from os import PathLike
    from pathlib import Path

__all__ = ["Program", "program_of", "save_html", "show", "trace", "trace_tensors", "trace_value"]


def __getattr__(name: str) -> Any:
    # `chainrule.Program` and `chainrule.program_of` without importing the engine up front.
    if name in ("Program", "program_of"):
        from chainrule.engine import value_reader

        return getattr(value_reader, name)
    if name == "trace_tensors":  # a tensor program's tensors of Values (docs/tensors.md)
        from chainrule.engine.tensor_program import trace_tensors

        return trace_tensors
    raise AttributeError(f"module 'chainrule' has no attribute {name!r}")


def trace(
    source: str | PathLike[str],
    values: dict[str, float] | None = None,
    *,
    expand_derived: bool = False,
    lang: str = "en",
) -> dict[str, Any]:
    """The `POST /api/graph` reply for `source` (our language or micrograd's Python) with leaf
    `values`: nodes with their boxes, edges, steps with narration templates (filled by
    `chainrule.engine.narration.narrations(reply)`), gradcheck (docs/api.md); its warnings in
    `lang` (`en`, `ru`, `et`). A tensor program (docs/tensors.md) is answered with its tensor
    reply (`kind: "tensor"`: a node per tensor with its shape, `data` and `grad` nested
    row-major, the tensor timeline; `values` keys its elements, `{"W[1,2]": 0.5}`);
    `chainrule.trace_tensors(source)` gives its tensors of Values. `source` may be a file's path
    (`pathlib.Path("neuron.py")`): the program it holds.
    Raises `chainrule.engine.ProgramError` (with `line`, `column`, `caret`) for a bad program."""
    from chainrule.engine.errors import placed_in_tracebacks
    from chainrule.notebook.traces import program_text, said_of_a_file, traced

    with said_of_a_file(source), placed_in_tracebacks(lang):
        return traced(program_text(source), values, expand_derived=expand_derived, lang=lang)


def trace_value(value: Any, *, expand_derived: bool = False, lang: str = "en") -> dict[str, Any]:
    """`trace` of the graph that ends in `value`: a micrograd `Value` (anything with `data`,
    `grad`, `_prev`, `_op` and optionally `label`) or a `chainrule.engine.Value`. The graph is
    read, never run; the reply's `program` is the program it was written as, and its warnings
    (in `lang`) say where micrograd's set of children merged a reused operand (`a*a`), which
    op no row of the table explains, and whether the leaves moved after the forward pass."""
    from chainrule.engine.errors import placed_in_tracebacks
    from chainrule.notebook.traces import traced_value

    with placed_in_tracebacks(lang):
        return traced_value(value, expand_derived=expand_derived, lang=lang)


def show(value_or_source: Any, values: dict[str, float] | None = None, lang: str = "en") -> Any:
    """The player for a graph or a program: in Jupyter an interactive widget whose sliders
    recompute in the kernel; elsewhere (a plain IPython terminal) a static SVG. A tensor
    program plays as the page's tensor view (its cells change in the kernel, a gradient cell's
    sum is computed there). `lang` (`en`, `ru`, `et`): the language of its words and
    narration. A program may be given as a file's path (`pathlib.Path("neuron.py")`)."""
    from chainrule.engine.errors import placed_in_tracebacks
    from chainrule.notebook.traces import program_text, said_of_a_file
    from chainrule.notebook.widget import show as show_

    with said_of_a_file(value_or_source), placed_in_tracebacks(lang):
        return show_(program_text(value_or_source), values, lang)


def save_html(
    value_or_source: Any,
    path: str | Path,
    values: dict[str, float] | None = None,
    lang: str = "en",
):
    """Write one self-contained HTML file that plays the trace (stepping, scrubbing,
    explanations, tables) from `file://`, with no network, its words and narration in `lang`
    (`en`, `ru`, `et`). A program may be given as a file's path (`pathlib.Path("neuron.py")`).
    Returns the path written."""
    from chainrule.engine.errors import placed_in_tracebacks
    from chainrule.notebook.traces import program_text, said_of_a_file
    from chainrule.notebook.traces import save_html as save

    with said_of_a_file(value_or_source), placed_in_tracebacks(lang):
        return save(program_text(value_or_source), path, values, lang)
