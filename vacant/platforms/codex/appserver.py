"""A minimal client of Codex's own app-server (JSON-RPC over stdio): `hooks/list` and `config/batchWrite`, so trust is written the way Codex itself writes it. Never on the hook's hot path."""

from __future__ import annotations

import json
import os
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any  # JSON-RPC messages: each value is checked before use

APP_SERVER_TIMEOUT_S = 30.0


class AppServerError(RuntimeError):
    pass


def codex_binary() -> str | None:
    """The `codex` to ask about trust: $VACANT_CODEX_BIN, else `codex` on PATH."""
    import shutil

    override = os.environ.get("VACANT_CODEX_BIN")
    if override:
        return override if os.path.exists(override) else None
    return shutil.which("codex")


class AppServer:
    """A minimal JSON-RPC client of `codex app-server` (stdio, one JSON object per line)."""

    def __init__(self, binary: str, cwd: Path, timeout: float = APP_SERVER_TIMEOUT_S) -> None:
        import subprocess

        self.timeout = timeout
        self.broken = False  # it stopped answering: no grace period at close
        self.buffer = b""
        self.next_id = 0
        try:
            self.proc = subprocess.Popen(
                [binary, "app-server"], cwd=str(cwd), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except OSError as error:
            raise AppServerError(f"cannot start {binary} app-server: {error}") from None
        try:
            self.request("initialize", {"clientInfo": {"name": "vacant", "version": _version()}})
            self._send({"method": "initialized"})
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> "AppServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _send(self, message: dict[str, Any]) -> None:
        stdin = self.proc.stdin
        assert stdin is not None  # started with stdin=PIPE
        try:
            stdin.write(json.dumps(message).encode() + b"\n")
            stdin.flush()
        except OSError as error:
            raise AppServerError(f"codex app-server went away: {error}") from None

    def _line(self, deadline: float) -> dict[str, Any]:
        import select
        import time

        stdout = self.proc.stdout
        assert stdout is not None  # started with stdout=PIPE
        while b"\n" not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.broken = True
                raise AppServerError("codex app-server did not answer in time")
            ready, _, _ = select.select([stdout], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(stdout.fileno(), 65536)
            if not chunk:
                raise AppServerError("codex app-server exited before answering")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        try:
            message: dict[str, Any] = json.loads(line)
        except ValueError:
            return {}
        return message

    def request(self, method: str, params: dict[str, Any]) -> Any:
        import time

        self.next_id += 1
        ident = self.next_id
        self._send({"id": ident, "method": method, "params": params})
        deadline = time.monotonic() + self.timeout
        while True:
            message = self._line(deadline)
            if message.get("id") != ident or "method" in message:
                continue  # a notification, or a request from the server we do not serve
            if "error" in message:
                raise AppServerError(f"codex app-server {method}: {(message['error'] or {}).get('message')}")
            return message.get("result")

    def hooks(self, cwd: Path) -> list[dict[str, Any]]:
        result = self.request("hooks/list", {"cwds": [str(cwd)]}) or {}
        return [hook for entry in result.get("data") or [] for hook in entry.get("hooks") or []]

    def write(self, edits: list[tuple[str, Any]]) -> None:
        if edits:
            self.request("config/batchWrite", {"edits": [
                {"keyPath": key, "mergeStrategy": "replace", "value": value} for key, value in edits
            ]})

    def close(self) -> None:
        import subprocess

        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=0 if self.broken else 5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def _version() -> str:
    try:
        from vacant import __version__

        return str(__version__)
    except ImportError:
        return "0"
