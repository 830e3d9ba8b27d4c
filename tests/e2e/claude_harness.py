"""Helpers for end-to-end tests that drive the real Claude Code CLI offline.

The CLI (pinned in ``fixtures/agents/package.json``) talks to a scripted fake
Anthropic upstream (``fixtures/upstreams/fake_anthropic.py``) with an isolated
HOME, so a run needs no network, no account and no user config.

Typical use::

    script = {"turns": [
        {"content": [{"type": "tool_use", "name": "Write",
                      "input": {"file_path": str(ws / "a.txt"), "content": "A\\n"}}]},
        {"content": [{"type": "text", "text": "All done."}]},
    ]}
    with FakeUpstream(script, tmp_path / "up") as up:
        proc = run_claude_p(ws, home, up, "write a.txt")
    assert proc.returncode == 0, proc.stderr
    reqs = up.requests()

This module holds no tests.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterable

REPO_ROOT = Path(__file__).resolve().parents[2]
AGENTS_DIR = REPO_ROOT / "fixtures" / "agents"
FAKE_ANTHROPIC = REPO_ROOT / "fixtures" / "upstreams" / "fake_anthropic.py"

FAKE_API_KEY = "sk-fake"


def claude_binary() -> Path:
    """Path of the pinned ``claude`` CLI; raises (never skips) when it is missing."""
    path = AGENTS_DIR / "node_modules" / ".bin" / "claude"
    if not path.exists():
        raise RuntimeError(
            f"Claude Code CLI not found at {path}. "
            "Run the README test command: it runs npm ci "
            f"(npm ci --prefix {AGENTS_DIR.relative_to(REPO_ROOT)})."
        )
    return path


class FakeUpstream:
    """Runs ``fake_anthropic.py`` with ``script`` in a subprocess for a ``with`` block.

    Files go to ``workdir``: ``script.json``, ``requests.jsonl`` (one line per
    ``/v1/messages`` request), ``port`` and ``server.log`` (stderr/access log).
    """

    def __init__(self, script: dict, workdir: Path, start_timeout: float = 10.0):
        self.script = script
        self.workdir = Path(workdir)
        self.start_timeout = start_timeout
        self.script_path = self.workdir / "script.json"
        self.log_path = self.workdir / "requests.jsonl"
        self.port_file = self.workdir / "port"
        self.server_log = self.workdir / "server.log"
        self.proc: subprocess.Popen | None = None
        self.port: int | None = None

    @property
    def url(self) -> str:
        if self.port is None:
            raise RuntimeError("FakeUpstream is not running")
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "FakeUpstream":
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.script_path.write_text(json.dumps(self.script, indent=1), encoding="utf-8")
        for p in (self.log_path, self.port_file):
            if p.exists():
                p.unlink()
        self.log_path.touch()
        with open(self.server_log, "ab") as err:
            self.proc = subprocess.Popen(
                [sys.executable, str(FAKE_ANTHROPIC),
                 "--script", str(self.script_path),
                 "--log", str(self.log_path),
                 "--port-file", str(self.port_file)],
                stdin=subprocess.DEVNULL, stdout=err, stderr=err,
            )
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.port_file.exists():
                text = self.port_file.read_text().strip()
                if text:
                    self.port = int(text)
                    return self
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        log = self.server_log.read_text(errors="replace")
        self.stop()
        raise RuntimeError(f"fake Anthropic upstream did not start; its output:\n{log}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self.proc = None

    def __enter__(self) -> "FakeUpstream":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def requests(self) -> list[dict]:
        """Parsed log lines, in the order they were written (``n`` ascending for serial runs)."""
        if not self.log_path.exists():
            return []
        out = []
        for line in self.log_path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                out.append(json.loads(line))
        return out

    def scripted_requests(self) -> list[dict]:
        """Only the requests that were answered with a scripted turn."""
        return [r for r in self.requests() if r.get("turn") is not None]


def isolated_home(home: Path, workspace: Path, api_key: str = FAKE_API_KEY) -> Path:
    """Write ``home/.claude.json`` pre-answering onboarding, folder trust and the API-key prompt.

    Returns the path written.  An existing file is updated, not replaced.
    """
    home = Path(home)
    home.mkdir(parents=True, exist_ok=True)
    cfg_path = home / ".claude.json"
    cfg: dict = {}
    if cfg_path.exists():
        cfg = json.loads(cfg_path.read_text(encoding="utf-8") or "{}")
    cfg["hasCompletedOnboarding"] = True
    projects = cfg.setdefault("projects", {})
    ws_abs = Path(workspace).absolute()
    for key in {str(ws_abs), os.path.realpath(ws_abs)}:
        projects.setdefault(key, {})["hasTrustDialogAccepted"] = True
    responses = cfg.setdefault("customApiKeyResponses", {"approved": [], "rejected": []})
    responses.setdefault("approved", [])
    responses.setdefault("rejected", [])
    tail = api_key[-20:]
    if tail not in responses["approved"]:
        responses["approved"].append(tail)
    cfg_path.write_text(json.dumps(cfg, indent=2), encoding="utf-8")
    return cfg_path


def claude_env(home: Path, upstream_url: str, api_key: str = FAKE_API_KEY) -> dict:
    """A copy of os.environ for an offline run: HOME, fake upstream, no telemetry.

    Inherited ``CLAUDE*`` / ``ANTHROPIC*`` variables are dropped (a test run from
    inside a Claude Code session must not leak ``CLAUDECODE=1`` and friends).
    """
    env = {k: v for k, v in os.environ.items()
           if not k.upper().startswith(("CLAUDE", "ANTHROPIC"))}
    env.update({
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": upstream_url,
        "ANTHROPIC_API_KEY": api_key,
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
    })
    return env


def run_claude_p(
    workspace: Path,
    home: Path,
    upstream: "FakeUpstream | str",
    prompt: str,
    extra_args: Iterable[str] = (),
    settings: str | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess:
    """Run ``claude -p PROMPT`` once in ``workspace`` and return the finished process.

    Edits and Bash are allowed (``--permission-mode acceptEdits --allowedTools
    Bash``: in ``-p`` default mode they are denied).  ``settings`` is passed as
    ``--settings`` (a file path or inline JSON).  stdout is the JSON result
    (``--output-format json``).  ``home/.claude.json`` is written with
    :func:`isolated_home` if it does not exist yet.
    """
    url = upstream if isinstance(upstream, str) else upstream.url
    if not (Path(home) / ".claude.json").exists():
        isolated_home(home, workspace)
    cmd = [str(claude_binary()), "-p", prompt,
           "--permission-mode", "acceptEdits",
           "--allowedTools", "Bash",
           "--output-format", "json"]
    if settings is not None:
        cmd += ["--settings", settings]
    cmd += list(extra_args)
    return subprocess.run(
        cmd, cwd=str(workspace), env=claude_env(home, url),
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout,
    )
