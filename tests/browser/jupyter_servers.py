"""Notebook servers for the browser tests and bench/notebook_show.py: a server started until it
says it listens (`start_until_ready`), JupyterLab on a folder with a real ipykernel
(`start_jupyterlab`, its own files in that folder, never the user's home), and a notebook's page
opened in Chromium (`open_notebook`)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from playwright.sync_api import TimeoutError as PlaywrightTimeout
from servers import free_port


def start_until_ready(
    command: list[str], ready_line: str, env: dict | None = None, seconds: float = 120, **popen
):
    """Start a server (`command`) and wait until it prints a line holding `ready_line`, which it
    prints once it listens: a thread reads its output line by line (and keeps draining it, so a
    full pipe never stalls the server) and signals that line, or the output's end."""
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**(env or os.environ), "PYTHONUNBUFFERED": "1"}, **popen,
    )  # fmt: skip
    said: list[str] = []
    signalled = threading.Event()

    def read() -> None:
        for line in process.stdout:
            said.append(line)
            if ready_line in line:
                signalled.set()
        signalled.set()  # the output ended: the server stopped

    threading.Thread(target=read, daemon=True).start()
    if not signalled.wait(seconds) or not any(ready_line in line for line in said):
        process.kill()
        raise AssertionError(f"no {ready_line!r} from {command[2:4]}: {''.join(said)[-2000:]}")
    return process


def start_jupyterlab(root: Path, trusted: list[str]) -> tuple[subprocess.Popen, str]:
    """JupyterLab serving `root` on a free loopback port, without a token, the notebooks
    `trusted` (names in `root`) signed as their user's own: its process and its URL."""
    # Jupyter's own files in the folder, not in the user's home.
    env = {**os.environ, **{name: str(root / folder) for name, folder in (
        ("JUPYTER_DATA_DIR", "data"), ("JUPYTER_RUNTIME_DIR", "runtime"),
        ("JUPYTER_CONFIG_DIR", "config"), ("JUPYTERLAB_SETTINGS_DIR", "settings"),
        ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"))}}  # fmt: skip
    jupyter = [sys.executable, "-m", "jupyter"]
    # Outputs of a notebook its user ran are trusted (JupyterLab signs what it saves).
    if trusted:
        subprocess.run([*jupyter, "trust", *trusted], cwd=root, env=env,
                       check=True, capture_output=True)  # fmt: skip
    # Jupyter Server logs "Jupyter Server <version> is running at:" after it bound the port. On
    # 127.0.0.1 and that port or none: by default it moved to the next port when the free one was
    # taken meanwhile (the other test process starts servers too), and the page was then refused
    # (a fresh clone's run). A port taken that way is tried again with another.
    command = [*jupyter, "lab", "--no-browser", "--allow-root", "--ServerApp.ip=127.0.0.1",
               "--ServerApp.port_retries=0", "--IdentityProvider.token=",
               "--ServerApp.password=", f"--ServerApp.root_dir={root}"]  # fmt: skip
    attempts = 3
    for attempt in range(1, attempts + 1):
        port = free_port()
        try:
            process = start_until_ready(
                [*command, f"--port={port}"], "is running at", cwd=root, env=env
            )
        except AssertionError:
            if attempt == attempts:
                raise
            continue
        return process, f"http://127.0.0.1:{port}"
    raise AssertionError(f"JupyterLab did not start in {attempts} attempts")


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    process.wait(timeout=30)


def open_notebook(browser, url: str, init_script: str | None = None):
    """A new page of `browser` at `url`, `init_script` run in it before the page's own."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(120_000)
    if init_script:
        page.add_init_script(init_script)
    page.goto(url)
    return page


def accept_dialogs(page) -> list[str]:
    """JupyterLab's modal dialogs open in `page` accepted (its default button: "Select" the
    notebook's kernel, "Ok" an error), their texts returned. A fresh clone's run (2026-12-03) met
    one while its first notebook opened on a loaded machine: it took the click on the cell, and
    the test waited out its 120 s."""
    texts = []
    for dialog in page.locator(".jp-Dialog").all():
        if dialog.is_visible():
            texts.append(" ".join(dialog.inner_text().split()))
            dialog.locator(".jp-mod-accept").first.click()
    return texts


def run_first_cell(page, tries: int = 5) -> None:
    """Shift+Enter on the notebook's first cell until its prompt says it runs (`[*]:`) or ran: on
    a busy machine a run asked while the new kernel was still connecting was dropped, the
    selection moved on and the cell never ran. A JupyterLab dialog in the way is accepted first,
    and named if the cell still never runs."""
    first = page.locator(".jp-Cell").first
    page.locator(".jp-Notebook-ExecutionIndicator[data-status=idle]").wait_for()
    dialogs: list[str] = []
    for _ in range(tries):
        dialogs += accept_dialogs(page)
        try:
            first.locator(".cm-content").click(timeout=15_000)
        except PlaywrightTimeout:
            continue  # a dialog opened meanwhile took the click
        page.keyboard.press("Shift+Enter")
        try:
            page.wait_for_function(
                "(cell) => !cell.querySelector('.jp-InputPrompt').textContent.includes('[ ]')",
                arg=first.element_handle(),
                timeout=15_000,
            )
            return
        except PlaywrightTimeout:
            continue
    raise AssertionError(
        f"the notebook's first cell did not run after {tries} tries (dialogs accepted: {dialogs})"
    )
