"""`vacant-client PLATFORM`: the lean command hook. Forwards stdin to the workspace's daemon over
its unix socket and prints the answer; with no daemon it starts one (detached, not waited for)
and answers in-process exactly as `vacant-hook` does.

Imports: the standard library's socket/json/os plus vacant.core.locations and vacant.daemon.paths
(a test measures them like the hook's). The in-process fallback imports vacant.hook only when it
is needed. Trust: whatever goes wrong with the daemon (absent, stale socket, timeout, refusal,
garbage answer), the call is answered in-process, so the gate keeps failing closed and the
recorder keeps failing open exactly as without a daemon.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path

from vacant.core.locations import find_root
from vacant.daemon.paths import socket_path, spawn

TOOL_TIMEOUT_S = 20.0  # well inside the 60 s hook timeout: a stuck daemon still leaves time to fall back
STOP_TIMEOUT_S = 560.0  # the Stop pipeline may replay for minutes (the hook's own budget is 570 s)
SESSION_START_WAIT_S = 10.0
NO_DAEMON = ("", -1)  # a sentinel: nobody listening (distinct from an answer or a failed one)
FORWARDED_ENV = ("CLAUDE", "CODEX", "OPENCODE", "VACANT", "HOME", "PWD")


def _root(env: dict[str, str]) -> Path:
    project = env.get("CLAUDE_PROJECT_DIR")
    return Path(project) if project else find_root(Path.cwd())


def ask_daemon(root: Path, platform: str, raw: bytes, env: dict[str, str]) -> tuple[str, int] | None:
    """The daemon's answer, or None when it cannot give one (then the caller falls back).

    With none running, the call starts one and does not wait for it, except at session start:
    Claude's http hooks that follow have no fallback, so the session start waits (up to
    SESSION_START_WAIT_S) until the daemon answers, then asks it."""
    answer = _ask(root, platform, raw, env)
    if answer is not NO_DAEMON:
        return answer
    if not _is_session_start(raw):
        return None
    deadline = time.monotonic() + SESSION_START_WAIT_S
    while time.monotonic() < deadline:
        time.sleep(0.02)
        answer = _ask(root, platform, raw, env, spawn_missing=False)
        if answer is not NO_DAEMON:
            return answer
    return None


def _is_session_start(raw: bytes) -> bool:
    return b'"SessionStart"' in raw or b'"session.created"' in raw or b'"event": "start"' in raw


def _ask(root: Path, platform: str, raw: bytes, env: dict[str, str], spawn_missing: bool = True):
    timeout = STOP_TIMEOUT_S if b'Stop"' in raw or b"stop" in platform.encode() else TOOL_TIMEOUT_S
    header = {"op": "hook", "platform": platform, "length": len(raw),
              "env": {k: v for k, v in env.items() if k.startswith(FORWARDED_ENV)}}
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(timeout)
            conn.connect(socket_path(root))
            conn.sendall(json.dumps(header).encode() + b"\n" + raw)
            chunks = []
            while True:
                chunk = conn.recv(1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
                if chunk.endswith(b"\n"):
                    break
        reply = json.loads(b"".join(chunks))
    except (FileNotFoundError, ConnectionRefusedError):
        if spawn_missing:
            spawn(root)  # none running (or a stale socket): start one for the next call
        return NO_DAEMON
    except (OSError, ValueError):
        return None
    if not isinstance(reply, dict) or reply.get("status") != 200 or not isinstance(reply.get("stdout"), str):
        return None
    return reply["stdout"], int(reply.get("code") or 0)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    raw = sys.stdin.buffer.read()
    env = dict(os.environ)
    answer = None
    if len(argv) == 1:
        try:
            answer = ask_daemon(_root(env), argv[0], raw, env)
        except Exception:  # noqa: BLE001 - any client trouble: the in-process path answers
            answer = None
    if answer is None:
        from vacant import hook  # the fallback: only when the daemon could not answer

        return hook.main(argv, raw)
    stdout, code = answer
    if stdout:
        sys.stdout.write(stdout)
        sys.stdout.flush()
    return code


if __name__ == "__main__":
    sys.exit(main())
