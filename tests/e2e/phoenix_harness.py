"""A real Arize Phoenix server for the export tests: `phoenix serve` from `.venv-phoenix` (made by
scripts/setup) on free loopback ports, its working directory (SQLite database) in a temp dir, with
its telemetry and its own fetches of outside resources turned off.

Startup is polled on /healthz with a deadline; the server's whole process group is killed on
exit, whatever happened. A missing install fails the test (never skips).

This module holds no tests."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

from harness import REPO_ROOT

PHOENIX = REPO_ROOT / ".venv-phoenix" / "bin" / "phoenix"
START_TIMEOUT_S = 120.0
START_ATTEMPTS = 3


class PortTaken(Exception):
    pass


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Phoenix:
    def __init__(self, workdir: Path) -> None:
        self.workdir = Path(workdir)
        self.port = free_port()
        self.grpc_port = free_port()
        self.proc: subprocess.Popen | None = None
        self.log_path = self.workdir / "phoenix.log"
        self.started_in: float | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> "Phoenix":
        if not PHOENIX.exists():
            raise RuntimeError(f"Phoenix is not installed at {PHOENIX}: run scripts/setup (it makes .venv-phoenix)")
        self.workdir.mkdir(parents=True, exist_ok=True)
        for attempt in range(START_ATTEMPTS):
            try:
                return self._start()
            except PortTaken:
                # a free port can be taken between asking for it and Phoenix binding it: new ports
                self.port, self.grpc_port = free_port(), free_port()
        raise RuntimeError(f"phoenix serve found no free ports in {START_ATTEMPTS} attempts:\n{self.log()}")

    def _start(self) -> "Phoenix":
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PHOENIX_", "OTEL_"))}
        env.update(PHOENIX_WORKING_DIR=str(self.workdir), PHOENIX_PORT=str(self.port), PHOENIX_HOST="127.0.0.1",
                   PHOENIX_GRPC_PORT=str(self.grpc_port), PHOENIX_TELEMETRY_ENABLED="false",
                   # no fetches of its own (a WASM sandbox binary, a docs MCP server): loopback only
                   PHOENIX_ALLOW_EXTERNAL_RESOURCES="false", PHOENIX_DISABLE_AGENT_ASSISTANT="true")
        started = time.monotonic()
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen([str(PHOENIX), "serve"], cwd=self.workdir, env=env, stdin=subprocess.DEVNULL,
                                         stdout=log, stderr=log, start_new_session=True)
        try:
            self._wait_ready(started)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        self.started_in = time.monotonic() - started
        return self

    def _wait_ready(self, started: float) -> None:
        while time.monotonic() - started < START_TIMEOUT_S:
            if self.proc.poll() is not None:
                if "Address already in use" in self.log():
                    raise PortTaken()
                raise RuntimeError(f"phoenix serve exited ({self.proc.returncode}):\n{self.log()}")
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=2) as response:
                    if response.status == 200:
                        return
            except (OSError, urllib.error.URLError):
                pass
            time.sleep(0.2)
        raise RuntimeError(f"phoenix serve not ready within {START_TIMEOUT_S:.0f} s:\n{self.log()}")

    def __exit__(self, *exc) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
            except ProcessLookupError:
                pass
        self.proc = None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:] if self.log_path.exists() else ""

    def get(self, path: str) -> dict:
        with urllib.request.urlopen(f"{self.url}{path}", timeout=10) as response:
            return json.loads(response.read())

    def spans(self, project: str = "default", expect: int = 1, timeout_s: float = 30.0) -> list[dict]:
        """Every span of a project (paged), once at least `expect` are stored (ingestion is async)."""
        deadline = time.monotonic() + timeout_s
        while True:
            found, cursor = [], None
            while True:
                query = "?limit=1000" + (f"&cursor={cursor}" if cursor else "")
                page = self.get(f"/v1/projects/{project}/spans{query}")
                found += page["data"]
                cursor = page.get("next_cursor")
                if not cursor:
                    break
            if len(found) >= expect or time.monotonic() > deadline:
                return found
            time.sleep(0.3)
