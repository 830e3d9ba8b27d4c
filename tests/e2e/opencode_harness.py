"""Helpers for end-to-end tests that drive the real OpenCode CLI (``opencode-ai``, pinned in
``fixtures/agents/package.json``) offline, against the scripted fake upstream's Chat Completions
endpoint (``fixtures/upstreams/fake_responses.py``, the same server Codex uses for Responses).

OpenCode reads its provider from ``$HOME/.config/opencode/opencode.json`` (written here with the
fake's URL: ``@ai-sdk/openai-compatible`` is bundled in the binary) and its project directory from
``$PWD``. This module holds no tests."""

from __future__ import annotations

import json
import os
from pathlib import Path

from harness import AGENTS_BIN, BIN, agent_binary

MODEL = "fake/fake-model"


def opencode_binary() -> Path:
    """Path of the pinned ``opencode`` CLI; raises (never skips) when it is missing."""
    return agent_binary("opencode", "OpenCode")


def config_path(home: Path) -> Path:
    return Path(home) / ".config" / "opencode" / "opencode.json"


def write_opencode_config(home: Path, base_url: str) -> Path:
    """The person's own OpenCode config: the fake provider, no autoupdate, no sharing."""
    path = config_path(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({
        "$schema": "https://opencode.ai/config.json",
        "provider": {"fake": {"npm": "@ai-sdk/openai-compatible", "name": "Fake",
                              "options": {"baseURL": base_url, "apiKey": "sk-fake"},
                              "models": {"fake-model": {"name": "Fake Model", "tool_call": True}}}},
        "model": MODEL, "small_model": MODEL, "autoupdate": False, "share": "disabled",
    }, indent=2) + "\n")
    return path


def opencode_env(home: Path, workspace: Path, vacant_home: Path | None = None) -> dict:
    """A copy of os.environ for an offline run: isolated HOME, PWD = the project, no model list
    fetch, no autoupdate, no LSP download. Inherited ``OPENCODE*`` variables are dropped."""
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("OPENCODE")}
    env.update({
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(Path(home) / ".config"),
        "XDG_DATA_HOME": str(Path(home) / ".local" / "share"),
        "XDG_CACHE_HOME": str(Path(home) / ".cache"),
        "XDG_STATE_HOME": str(Path(home) / ".local" / "state"),
        "PWD": str(workspace),
        "PATH": f"{AGENTS_BIN}{os.pathsep}{BIN}{os.pathsep}{env.get('PATH', '')}",
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "NO_COLOR": "1",
    })
    if vacant_home is not None:
        env["VACANT_HOME"] = str(vacant_home)
    return env


def chat_request_text(request: dict) -> str:
    """The text of the last user message of a logged Chat Completions request."""
    for message in reversed((request.get("body") or {}).get("messages") or []):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                return "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
            return str(content)
    return ""
