"""Big layouts in a process of their own, for a caller that traces in its own process (the
notebook's `chainrule.trace_value`, `show`, `save_html`): above `dot_max_nodes` the layered
fallback lays a graph out in pure Python (micrograd's demo: ~0.8 s of its 3.5 s), which a thread
beside the passes could only interleave with them, the interpreter being one. In a helper
process it runs on another core while the passes and the reply are made.

The helper is a plain `python -c` of this interpreter (`sys.executable`, the caller's `sys.path`),
never multiprocessing: that would import the caller's `__main__` again in the child, and run a
learner's script a second time. It reads requests from its stdin and answers on its stdout, a
length-prefixed pickle each way (both ends are this package: nothing else writes to the pipes),
until its stdin closes (the caller is gone). Any failure (no interpreter to start, a child that
died) is answered with None: the caller lays the graph out itself, as without a helper.
"""

from __future__ import annotations

import atexit
import pickle
import signal
import struct
import subprocess
import sys
from threading import Lock
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chainrule.app.layout.layouter import Layout, Structure
    from chainrule.app.settings import AppSettings

_LENGTH = struct.Struct("<Q")

# The child: the caller's import path (chainrule may be found through it alone), then the loop.
_CHILD = (
    "import sys; sys.path[:0] = {path!r}; from chainrule.app.layout.process import serve; serve()"
)


def _send(pipe: IO[bytes], message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    pipe.write(_LENGTH.pack(len(data)))
    pipe.write(data)
    pipe.flush()


def _receive(pipe: IO[bytes]) -> Any:
    """The next message on `pipe`; EOFError when it closed."""
    head = pipe.read(_LENGTH.size)
    if len(head) < _LENGTH.size:
        raise EOFError
    (length,) = _LENGTH.unpack(head)
    data = pipe.read(length)
    if len(data) < length:
        raise EOFError
    return pickle.loads(data)  # noqa: S301 - our own process's bytes (see the module's docstring)


class LayoutProcess:
    """A helper process that lays out graphs of at least `min_nodes` nodes (0: never), started
    when the first such graph is expected (`expect`) and kept for the caller's later graphs."""

    def __init__(self, settings: AppSettings, min_nodes: int) -> None:
        self.settings = settings
        self.min_nodes = min_nodes
        self._child: subprocess.Popen[bytes] | None = None
        self._lock = Lock()  # one layout at a time: a second caller lays out its own
        self.layouts = 0  # how many the helper made (tests, benchmarks)

    def wanted(self, nodes: int) -> bool:
        """Whether a graph of `nodes` nodes is laid out in the helper."""
        return 0 < self.min_nodes <= nodes

    def expect(self, nodes: int) -> None:
        """A graph of about `nodes` nodes is coming: start the helper now if it will lay it out,
        so its interpreter starts and imports while the caller builds the graph."""
        if self.wanted(nodes):
            with self._lock:
                self._started()

    def layout(self, structure: Structure) -> Layout | None:
        """`structure`'s layout made by the helper (its Layouter, the same settings), or None:
        the helper is busy with another caller's, could not start, or died (then it is started
        again for the next graph)."""
        if not self._lock.acquire(blocking=False):
            return None
        try:
            child = self._started()
            if child is None:
                return None
            try:
                _send(child.stdin, structure)
                kind, answer = _receive(child.stdout)
            except (OSError, EOFError, pickle.PickleError):
                self._stop()
                return None
            if kind != "layout":  # the helper's own error: the caller's layout will say it
                return None
            self.layouts += 1
            return answer
        finally:
            self._lock.release()

    def close(self) -> None:
        with self._lock:
            self._stop()

    def _started(self) -> subprocess.Popen[bytes] | None:
        """The running helper, started if it is not (the caller holds the lock)."""
        if self._child is not None and self._child.poll() is None:
            return self._child
        self._stop()
        try:
            child = subprocess.Popen(
                [sys.executable, "-c", _CHILD.format(path=sys.path)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except (OSError, ValueError):  # no interpreter to run (an embedded Python, Pyodide)
            self.min_nodes = 0
            return None
        self._child = child
        atexit.register(self.close)
        try:
            _send(child.stdin, self.settings)
        except OSError:  # it ended at once
            self._stop()
            return None
        return child

    def _stop(self) -> None:
        child, self._child = self._child, None
        if child is None:
            return
        atexit.unregister(self.close)
        for pipe in (child.stdin, child.stdout):
            try:
                pipe.close()
            except OSError:
                pass
        try:
            child.wait(timeout=2)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def serve(requests: IO[bytes] | None = None, answers: IO[bytes] | None = None) -> None:
    """The helper's loop: the caller's settings, then a layout for each structure, until the
    caller closes the pipe. Its own cache keeps a few layouts (the caller keeps them all)."""
    requests = requests or sys.stdin.buffer
    answers = answers or sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print never lands in the answers
    # Ctrl-C in a terminal reaches the whole process group: the caller decides, and a helper it
    # no longer needs ends with its pipe.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        settings = _receive(requests)
    except EOFError:
        return
    from chainrule.app.layout.layouter import Layouter

    layouter = Layouter.from_settings(settings.model_copy(update={"layout_cache_size": 2}))
    while True:
        try:
            structure = _receive(requests)
        except EOFError:
            return
        try:
            answer: tuple[str, Any] = ("layout", layouter.layout(structure)[0])
        except Exception as error:  # noqa: BLE001 - said to the caller, who lays out itself
            answer = ("error", repr(error))
        try:
            _send(answers, answer)
        except OSError:
            return
