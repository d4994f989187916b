"""The app as a child `streamlit run` on a free local port: for the browser tests and benchmarks."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import IO

REPO = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class StreamlitServer:
    """Serve `script` against one map folder until `stop()` (or the end of a `with` block).

    Args:
        map_folder: the map to open (`ATLAS_MAP`).
        maps_dir: the folder searched for other maps (`ATLAS_MAPS_DIR`); pass an empty one for
            exactly one map.
        script: the Streamlit script; default: the app.
        log: where the server's output goes; default: discarded.
        timeout: seconds to wait for the server's health check.
        python: the interpreter that runs Streamlit; default: this one (another venv's, to test hosting).
        env: more environment variables for the server.
        python_options: interpreter options before `-m streamlit`, e.g. ["-X", "importtime"].
        preexec_fn: run in the child before Streamlit starts (e.g. to join a cgroup).
    """

    def __init__(
        self,
        map_folder: Path,
        maps_dir: Path,
        *,
        script: Path = REPO / "streamlit_app.py",
        log: IO | None = None,
        timeout: float = 90,
        python: str | Path = sys.executable,
        env: dict[str, str] | None = None,
        python_options: list[str] | None = None,
        preexec_fn: Callable[[], None] | None = None,
    ) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        env = dict(os.environ, ATLAS_MAP=str(map_folder), ATLAS_MAPS_DIR=str(maps_dir), **(env or {}))
        # fmt: off
        command = [
            str(python), *(python_options or []), "-m", "streamlit", "run", str(script),
            "--server.port", str(self.port), "--server.headless", "true", "--server.address", "127.0.0.1",
        ]
        # fmt: on
        self.process = subprocess.Popen(
            command,
            cwd=REPO,
            env=env,
            stdout=log or subprocess.DEVNULL,
            stderr=subprocess.STDOUT if log else subprocess.DEVNULL,
            start_new_session=True,  # its own process group, so stop() ends its children too
            preexec_fn=preexec_fn,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(self.url + "_stcore/health", timeout=2) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"streamlit did not start within {timeout:.0f} s for {map_folder}")

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)

    def __enter__(self) -> StreamlitServer:
        return self

    def __exit__(self, *_) -> None:
        self.stop()
