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
from pathlib import Path
from typing import Iterable

from harness import UPSTREAMS, ScriptedUpstream, agent_binary, person_key

FAKE_ANTHROPIC = UPSTREAMS / "fake_anthropic.py"

FAKE_API_KEY = "sk-fake"


def claude_binary() -> Path:
    """Path of the pinned ``claude`` CLI; raises (never skips) when it is missing."""
    return agent_binary("claude", "Claude Code")


class FakeUpstream(ScriptedUpstream):
    """Runs ``fake_anthropic.py`` with ``script`` in a subprocess for a ``with`` block (one line
    per ``/v1/messages`` request in ``requests.jsonl``)."""

    SERVER = FAKE_ANTHROPIC
    TITLE = "fake Anthropic upstream"

    @property
    def url(self) -> str:
        """What goes in ``ANTHROPIC_BASE_URL``."""
        return self._origin()


def tool(name: str, **tool_input) -> dict:
    """A scripted ``tool_use`` block."""
    return {"type": "tool_use", "name": name, "input": tool_input}


def turn(*blocks, **extra) -> dict:
    """A scripted turn of content blocks; ``extra`` is ``match``, ``delay``, ``write_files``..."""
    return {"content": list(blocks), **extra}


def isolated_home(home: Path, workspace: Path, api_key: str = FAKE_API_KEY) -> Path:
    """Write ``home/.claude.json`` pre-answering onboarding, folder trust and the API-key prompt.

    Returns the path written.  An existing file is updated, not replaced.
    """
    home = Path(home)
    home.mkdir(parents=True, exist_ok=True)
    person_key(home)
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
