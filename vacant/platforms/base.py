"""The boundary every agent platform implements, and the normalised call the core consumes.

One module per platform under `vacant/platforms/` (the way pre-commit keeps one module per
language) exposes a `PLATFORM` object satisfying `Platform`. The core never asks which platform it
serves: it gets a `HookCall` and returns a `Response`. Stdlib only (hot path).
"""

from __future__ import annotations

import importlib
from collections import namedtuple

# What a hook call means to the core (a closed set).
KINDS = (
    "session_start",
    "prompt",
    "tool_pre",
    "tool_post",
    "tool_batch",
    "change_set",  # changes a watcher saw after the fact (no hooks): one step owning what a scan finds
    "subagent_start",
    "subagent_stop",
    "stop",
    "session_end",
    "ignore",
)

# origin: file | command | url | search | subagent | prompt; ref: the path, command, URL, query,
# agent id, or "user"; content: what was observed (str or bytes).
Read = namedtuple("Read", "origin ref content")
BatchCall = namedtuple("BatchCall", "key tool tool_input response_text")
# What the core wants the platform to do, rendered in the platform's exact output contract.
# action: allow | deny | block.
Response = namedtuple("Response", "action reason system_message", defaults=("allow", "", ""))


class HookCall:
    """One hook call, normalised. `scope` is a tool's write scope: None = it may touch anything
    (full scan); [] = it writes nothing; otherwise the paths it may write."""

    def __init__(self, kind: str, session_id: str, workspace, *, agent_id: str | None = None,
                 agent_type: str | None = None, tool: str | None = None, tool_input: object = None,
                 key: str | None = None, scope: list[str] | tuple | None = (), outcome: str | None = None,
                 exit_code: int | None = None, reads: list | None = None, batch: list | None = None,
                 source: str | None = None, transcript_path: str | None = None, model: str | None = None,
                 models: dict[str, str] | None = None, stop_hook_active: bool = False,
                 reason: str | None = None, cwd: str | None = None) -> None:
        self.kind = kind
        self.session_id = session_id
        self.workspace = workspace
        self.agent_id = agent_id
        self.agent_type = agent_type
        self.tool = tool
        self.tool_input = tool_input
        self.key = key  # the platform's tool-call id
        self.scope = list(scope) if isinstance(scope, tuple) else scope
        self.outcome = outcome  # ok | failed | not-run
        self.exit_code = exit_code
        self.reads = reads if reads is not None else []
        self.batch = batch if batch is not None else []
        self.source = source  # session_start: startup | resume | compact
        self.transcript_path = transcript_path
        self.model = model
        self.models = models if models is not None else {}  # agent id -> model, when a payload says
        self.stop_hook_active = stop_hook_active
        self.reason = reason
        self.cwd = cwd  # tool calls: the directory the tool runs in (the payload's cwd)


MAX_READ_BYTES = 32 * 1024 * 1024


def read_file_bytes(path: str) -> bytes | None:
    """A file's bytes as a read's content (None when gone, unreadable, or too big to keep)."""
    import os

    try:
        if os.path.getsize(path) > MAX_READ_BYTES:
            return None
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def render_hook_json(call: HookCall, response: Response) -> tuple[str, int]:
    """The JSON-on-stdout contract Claude Code and Codex share: a PreToolUse deny, a Stop block,
    a message for the person; an allow is empty output. Always exit 0 (exit 2 would prefix the
    hook's command line to what the model sees)."""
    import json

    out: dict[str, object] = {}
    if response.action == "deny" and call.kind == "tool_pre":
        out["hookSpecificOutput"] = {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": response.reason,
        }
    elif response.action == "block" and call.kind in ("stop", "subagent_stop"):
        out = {"decision": "block", "reason": response.reason}
    if response.system_message:
        out["systemMessage"] = response.system_message
    return (json.dumps(out) if out else ""), 0


def _protocol():
    from typing import Any, Protocol  # built on first use: the hook's hot path never imports typing

    class Platform(Protocol):
        name: str  # what `vacant-hook NAME` and `--platform NAME` say
        cell_platform: str  # the platform part of an actor cell

        def parse(self, payload: dict[str, Any], env: dict[str, str]) -> HookCall: ...

        def render(self, call: HookCall, response: Response) -> tuple[str, int]: ...

        def install(self, root, scope: str, hook_command: str): ...

        def uninstall(self, root, scope: str): ...

        def doctor(self, root, hook_command: str) -> list[tuple[str, bool, str]]: ...

    return Platform


def __getattr__(name: str):
    if name == "Platform":
        return _protocol()
    raise AttributeError(name)


ALIASES = {"claude-code": "claude"}


class UnknownPlatform(ValueError):
    pass


def load(name: str):
    """The platform module named `name` (a new platform is one new module, no registry edit)."""
    module_name = ALIASES.get(name, name)
    if not module_name.isidentifier() or module_name == "base":
        raise UnknownPlatform(f"unknown platform {name!r}")
    try:
        module = importlib.import_module(f"vacant.platforms.{module_name}")
    except ModuleNotFoundError:
        raise UnknownPlatform(f"unknown platform {name!r}") from None
    return module.PLATFORM
