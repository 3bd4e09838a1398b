"""Running Graphviz without letting one drawing hoard the machine.

Every `dot` runs in a child process bounded in address space and CPU time (rlimits set between
fork and exec), in wall time, and in how much output is read; the kernel kills it when the
process that started it dies. A semaphore per process bounds how many run at once: a caller
that finds every slot taken is told so at once (GraphvizBusy), never queued without bound.
"""

from __future__ import annotations

import atexit
import ctypes
import hashlib
import math
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chainrule.app.settings import AppSettings

# Linux's prctl(PR_SET_PDEATHSIG): the kernel kills a child when the thread that started it dies.
PR_SET_PDEATHSIG = 1
RLIMIT_CPU = 0  # Linux's resource numbers (<sys/resource.h>)
RLIMIT_CORE = 4
RLIMIT_AS = 9
READ_CHUNK = 65536


class GraphvizError(Exception):
    """Graphviz gave no drawing."""


class GraphvizBusy(GraphvizError):
    """Every Graphviz slot of this process is taken: try again in a moment."""


class GraphvizTimedOut(GraphvizError):
    """Graphviz ran past its wall time or its CPU time and was killed."""


class GraphvizOutputTooLarge(GraphvizError):
    """Graphviz wrote more than the output cap and was killed."""


class GraphvizFailed(GraphvizError):
    """Graphviz could not start, crashed (out of its memory, a signal) or exited with an error."""


class _RLimit(ctypes.Structure):
    _fields_ = [("rlim_cur", ctypes.c_ulong), ("rlim_max", ctypes.c_ulong)]


_libc = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


def child_setup(memory_bytes: int, cpu_seconds: int) -> Callable[[], None] | None:
    """What runs in the child between fork and exec: die with the parent, cap the address space
    and the CPU time, write no core file. Only C functions resolved now, on structures built
    now, are called there (the parent may have threads: nothing may take a Python-level lock)."""
    if _libc is None:
        return None
    prctl, setrlimit = _libc.prctl, _libc.setrlimit
    limits = (
        (RLIMIT_AS, _RLimit(memory_bytes, memory_bytes)),
        # SIGXCPU at the soft limit, SIGKILL a second later if it is caught.
        (RLIMIT_CPU, _RLimit(cpu_seconds, cpu_seconds + 1)),
        (RLIMIT_CORE, _RLimit(0, 0)),
    )
    references = [ctypes.byref(limit) for _, limit in limits]

    def setup() -> None:  # pragma: no cover - runs in the child
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        for (resource, _), reference in zip(limits, references):  # noqa: B905 - fixed pairs
            setrlimit(resource, reference)

    return setup


# util-linux's prlimit and setpriv set the same bounds and exec the command in place (its pid
# stays the one we kill): a child started without a Python preexec_fn is spawned by vfork, about
# 0.3 ms, where forking this process to run child_setup takes 7-14 ms at 80 MB (three dot runs
# a cold grouped layout).
PRLIMIT = shutil.which("prlimit")
SETPRIV = shutil.which("setpriv")


def bounded_command(command: list[str], memory_bytes: int, cpu_seconds: int) -> list[str] | None:
    """`command` run through prlimit and setpriv under child_setup's bounds, or None when
    either is missing (child_setup then sets them)."""
    if PRLIMIT is None or SETPRIV is None or _libc is None:
        return None
    limits = [f"--as={memory_bytes}", f"--cpu={cpu_seconds}:{cpu_seconds + 1}", "--core=0"]
    return [PRLIMIT, *limits, "--", SETPRIV, "--pdeathsig", "KILL", "--", *command]


def run_bounded(
    command: list[str],
    source: bytes,
    *,
    timeout_s: float,
    memory_bytes: int,
    output_bytes: int,
    merge_stderr: bool = False,
    env: dict[str, str] | None = None,
) -> bytes:
    """The standard output of `command` fed `source` (with its standard error when
    `merge_stderr`) in `env` (default: this process's): killed after `timeout_s` of wall time
    (or its CPU time) with GraphvizTimedOut, past `output_bytes` of output with
    GraphvizOutputTooLarge; a failure to start, a crash or an error exit is GraphvizFailed."""
    deadline = time.monotonic() + timeout_s
    with tempfile.TemporaryFile() as stdin:  # a file, so that writing never waits on reading
        stdin.write(source)
        stdin.seek(0)
        cpu_seconds = max(1, math.ceil(timeout_s))
        wrapped = bounded_command(command, memory_bytes, cpu_seconds)
        try:
            process = subprocess.Popen(
                wrapped or command,
                stdin=stdin,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT if merge_stderr else subprocess.DEVNULL,
                preexec_fn=None if wrapped else child_setup(memory_bytes, cpu_seconds),
                env=env,
            )
        except (OSError, subprocess.SubprocessError) as error:
            raise GraphvizFailed(str(error)) from error
    with process:
        try:
            output = read_capped(process, deadline, output_bytes)
            returncode = process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired as error:
            raise GraphvizTimedOut() from error
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    if returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        raise GraphvizTimedOut()
    if returncode != 0:
        raise GraphvizFailed(f"exit status {returncode}")
    return output


def read_capped(process: subprocess.Popen, deadline: float, cap: int) -> bytes:
    """All of `process`'s standard output, unless it is not done by `deadline`
    (GraphvizTimedOut) or writes more than `cap` bytes (GraphvizOutputTooLarge)."""
    assert process.stdout is not None
    descriptor = process.stdout.fileno()
    chunks: list[bytes] = []
    size = 0
    with selectors.DefaultSelector() as selector:
        selector.register(descriptor, selectors.EVENT_READ)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not selector.select(remaining):
                raise GraphvizTimedOut()
            chunk = os.read(descriptor, READ_CHUNK)
            if not chunk:
                return b"".join(chunks)
            size += len(chunk)
            if size > cap:
                raise GraphvizOutputTooLarge()
            chunks.append(chunk)


@dataclass
class Graphviz:
    """One process's way to Graphviz: its binary, its bounds and its slots (at most `slots`
    drawings at once; a caller waits up to `wait_s` for one, then gets GraphvizBusy)."""

    binary: str
    memory_bytes: int = 1 << 30
    output_bytes: int = 64 << 20
    slots: int = 2
    wait_s: float = 0.0
    _free: threading.BoundedSemaphore = field(init=False, repr=False)
    _lock: threading.Lock = field(init=False, repr=False, default_factory=threading.Lock)
    running: int = field(init=False, default=0)
    runs: int = field(init=False, default=0)  # how many times Graphviz was started

    def __post_init__(self) -> None:
        self._free = threading.BoundedSemaphore(self.slots)

    @classmethod
    def from_settings(cls, settings: AppSettings, binary: str | None = None) -> Graphviz:
        """This process's Graphviz with the settings' bounds; `binary` default: the settings'
        dot, else `dot` on the PATH."""
        if binary is None:
            binary = settings.dot_binary or shutil.which("dot") or ""
        return cls(
            binary,
            memory_bytes=settings.graphviz_max_memory_mb << 20,
            output_bytes=settings.graphviz_max_output_mb << 20,
            slots=settings.graphviz_slots,
            wait_s=settings.graphviz_wait_s,
        )

    def run(
        self,
        args: list[str],
        source: bytes,
        timeout_s: float,
        wait_s: float | None = None,
        env: dict[str, str] | None = None,
    ) -> bytes:
        """Graphviz's output for `source` (run_bounded, in `env`), in one of this process's
        slots (waiting for one up to `wait_s`, default the Graphviz's own `wait_s`)."""
        if not self.binary:
            raise GraphvizFailed("no Graphviz")
        if not self._free.acquire(timeout=self.wait_s if wait_s is None else wait_s):
            raise GraphvizBusy()
        return self._run_in_slot(args, source, timeout_s, env)

    def start(
        self, args: list[str], source: bytes, timeout_s: float, env: dict[str, str] | None = None
    ) -> Future[bytes] | None:
        """`run` in a thread of its own when a slot is free at once (its result then is run's
        output or error), else None: the caller runs it later itself. Never waits for a slot."""
        if not self.binary or not self._free.acquire(blocking=False):
            return None
        future: Future[bytes] = Future()

        def run_held() -> None:
            try:
                future.set_result(self._run_in_slot(args, source, timeout_s, env))
            except BaseException as error:  # whatever it is, the caller is told, never left waiting
                future.set_exception(error)

        threading.Thread(target=run_held, name="graphviz", daemon=True).start()
        return future

    def _run_in_slot(
        self, args: list[str], source: bytes, timeout_s: float, env: dict[str, str] | None
    ) -> bytes:
        """run_bounded in the slot the caller took (released here)."""
        with self._lock:
            self.running += 1
            self.runs += 1
        try:
            return run_bounded(
                [self.binary, *args],
                source,
                timeout_s=timeout_s,
                memory_bytes=self.memory_bytes,
                output_bytes=self.output_bytes,
                env=env,
            )
        finally:
            with self._lock:
                self.running -= 1
            self._free.release()


# The plugins a layout run uses: dot's layout and its JSON output (both in the core plugin).
LAYOUT_PLUGINS = ("libgvplugin_core.so*", "libgvplugin_dot_layout.so*")
HUGE_PAGES = "glibc.malloc.hugetlb=1"  # glibc 2.35+; an older one ignores it
_layout_environments: dict[str, dict[str, str] | None] = {}
_layout_environments_lock = threading.Lock()


def layout_environment(binary: str) -> dict[str, str] | None:
    """An environment in which Graphviz's `binary` loads only LAYOUT_PLUGINS (GVBINDIR, a
    directory of this process holding them and their configuration) and allocates on huge
    pages, or None when that cannot be made (then the usual environment). A dot loading every
    plugin spends ~20 ms of CPU on starting (pango, fontconfig) before it draws; our layouts
    have no text, and draw the same."""
    with _layout_environments_lock:
        if binary not in _layout_environments:
            _layout_environments[binary] = _trimmed_environment(binary)
        return _layout_environments[binary]


def _trimmed_environment(binary: str) -> dict[str, str] | None:
    plugins = _plugin_directory(binary)
    if plugins is None:
        return None
    libraries = sorted(library for pattern in LAYOUT_PLUGINS for library in plugins.glob(pattern))
    # glibc's malloc on huge pages: a third of the page faults, half the system time of a run.
    tunables = ":".join(filter(None, (os.environ.get("GLIBC_TUNABLES"), HUGE_PAGES)))
    shared = _shared_plugin_directory(binary, libraries)
    if shared is not None:
        env = {**os.environ, "GVBINDIR": str(shared), "GLIBC_TUNABLES": tunables}
        return env if _draws(binary, env) else None
    # No cache to write to: this process's own directory, removed when it exits.
    directory = tempfile.mkdtemp(prefix="chainrule-graphviz-")
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    env = {**os.environ, "GVBINDIR": directory, "GLIBC_TUNABLES": tunables}
    return env if _configured(binary, Path(directory), libraries) and _draws(binary, env) else None


def _configured(binary: str, directory: Path, libraries: list[Path]) -> bool:
    """Link `libraries` into `directory` and have `binary` (`dot -c`) write there the
    configuration of the plugins it finds: whether it did."""
    for library in libraries:
        os.symlink(library, directory / library.name)
    env = {**os.environ, "GVBINDIR": str(directory)}
    try:
        run_bounded([binary, "-c"], b"", timeout_s=10.0, memory_bytes=256 << 20,
                    output_bytes=4096, env=env)  # fmt: skip
    except GraphvizError:
        return False
    return any(directory.glob("config6*"))


def _draws(binary: str, env: dict[str, str]) -> bool:
    """Whether `binary` draws a trial graph as JSON in `env`."""
    try:
        drawing = run_bounded([binary, "-Tjson0"], b"digraph { a -> b }", timeout_s=10.0,
                              memory_bytes=256 << 20, output_bytes=1 << 16, env=env)  # fmt: skip
    except GraphvizError:
        return False
    return drawing.lstrip().startswith(b"{")


def _shared_plugin_directory(binary: str, libraries: list[Path]) -> Path | None:
    """The plugin directory of this Graphviz installation that every process of this user
    shares: `<cache>/chainrule/graphviz-<digest>` ($XDG_CACHE_HOME, else ~/.cache), the digest of
    the binary and the libraries (their paths, sizes and times: an upgrade makes another). Made
    once, in a directory of its own then renamed into place (two processes making it at once
    both end with one); a process killed leaves nothing behind, where a directory of its own in
    /tmp stayed. None when the cache cannot be written (then a directory of the process's own)."""
    digest = hashlib.sha256(os.path.realpath(shutil.which(binary) or binary).encode())
    for library in libraries:
        real = os.path.realpath(library)
        stat = os.stat(real)
        digest.update(f"\0{library.name}\0{real}\0{stat.st_size}\0{stat.st_mtime_ns}".encode())
    try:
        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "chainrule"
    except RuntimeError:  # no home directory
        return None
    final = cache / f"graphviz-{digest.hexdigest()[:16]}"
    if any(final.glob("config6*")):
        return final
    try:
        cache.mkdir(mode=0o700, parents=True, exist_ok=True)
        building = Path(tempfile.mkdtemp(prefix=f"{final.name}.", dir=cache))
    except OSError:
        return None
    try:
        if not _configured(binary, building, libraries):
            return None
        try:
            building.rename(final)
        except OSError:  # another process put it there first: theirs is the same
            pass
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return final if any(final.glob("config6*")) else None


def _plugin_directory(binary: str) -> Path | None:
    """Where the Graphviz installation of `binary` keeps its plugins (beside its configuration
    file, config6), looked for next to the binary's prefix; None if not found."""
    path = shutil.which(binary)
    if path is None:
        return None
    prefix = Path(os.path.realpath(path)).parent.parent
    for pattern in ("lib/*/graphviz/config6*", "lib64/graphviz/config6*", "lib/graphviz/config6*"):
        for config in sorted(prefix.glob(pattern)):
            return config.parent
    return None
