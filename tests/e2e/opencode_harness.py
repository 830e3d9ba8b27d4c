"""Helpers for end-to-end tests that drive the real OpenCode CLI (``opencode-ai``, pinned in
``fixtures/agents/package.json``) offline, against the scripted fake upstream's Chat Completions
endpoint (``fixtures/upstreams/fake_responses.py``, the same server Codex uses for Responses).

OpenCode reads its provider from ``$HOME/.config/opencode/opencode.json`` (written here with the
fake's URL: ``@ai-sdk/openai-compatible`` is bundled in the binary) and its project directory from
``$PWD``. Before loading a config directory's plugins, OpenCode installs its plugin SDK there with
npm (about 30 s from the registry) unless the directory already holds it. A person's own
``~/.config/opencode`` holds it after their first run; a test's fresh home gets the same files
(``seed_plugin_sdk``, from ``fixtures/agents/opencode-sdk``, installed by the README's test command)
so no test waits for that install. This module holds no tests."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from harness import AGENTS_BIN, AGENTS_DIR, BIN, agent_binary

MODEL = "fake/fake-model"
PLUGIN_SDK = AGENTS_DIR / "opencode-sdk"


def opencode_binary() -> Path:
    """Path of the pinned ``opencode`` CLI; raises (never skips) when it is missing."""
    return agent_binary("opencode", "OpenCode")


def config_path(home: Path) -> Path:
    return Path(home) / ".config" / "opencode" / "opencode.json"


def seed_plugin_sdk(directory: Path) -> None:
    """Put into ``directory`` what OpenCode's own npm install of its plugin SDK leaves there (its
    package.json, lock and node_modules, hard-linked from the pinned install), so OpenCode finds
    the SDK installed and starts without installing it. Raises (never skips) when it is missing."""
    modules = PLUGIN_SDK / "node_modules"
    if not (modules / "@opencode-ai" / "plugin").is_dir():
        raise RuntimeError(f"OpenCode's plugin SDK not found at {modules}. "
                           "Run the README test command: it runs npm ci in fixtures/agents/opencode-sdk.")
    directory.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(PLUGIN_SDK / name, directory / name)
    shutil.copytree(modules, directory / "node_modules", symlinks=True, copy_function=_link_or_copy)
    ignore = directory / ".gitignore"
    if not ignore.exists():  # what OpenCode writes beside its install
        ignore.write_text("node_modules\npackage.json\npackage-lock.json\nbun.lock\n.gitignore")


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:  # another file system
        shutil.copy2(source, target)


def write_opencode_config(home: Path, base_url: str) -> Path:
    """The person's own OpenCode config, as after their first run (the plugin SDK installed): the
    fake provider, no autoupdate, no sharing."""
    path = config_path(home)
    seed_plugin_sdk(path.parent)
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
