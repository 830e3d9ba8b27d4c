"""The boundary every agent platform implements, and the normalised call the core consumes.

One module per platform under `vacant/platforms/` (the way pre-commit keeps one module per
language) exposes a `PLATFORM` object satisfying `Platform`. The core never asks which platform it
serves: it gets a `HookCall` and returns a `Response`. Stdlib only (hot path).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

# What a hook call means to the core (a closed set).
KINDS = (
    "session_start",
    "prompt",
    "tool_pre",
    "tool_post",
    "tool_batch",
    "subagent_start",
    "subagent_stop",
    "stop",
    "session_end",
    "ignore",
)

# A tool's write scope: None = it may touch anything (full scan); [] = it writes nothing;
# otherwise the workspace-relative or absolute paths it may write.
Scope = "list[str] | None"


@dataclass
class Read:
    origin: str  # file | command | url | search | subagent | prompt
    ref: str  # the path, command, URL, query, agent id, or "user"
    content: str | bytes


@dataclass
class BatchCall:
    key: str
    tool: str
    tool_input: Any
    response_text: str


@dataclass
class HookCall:
    kind: str
    session_id: str
    workspace: Path
    agent_id: str | None = None
    agent_type: str | None = None
    tool: str | None = None
    tool_input: Any = None
    key: str | None = None  # tool_use_id
    scope: list[str] | None = field(default_factory=list)
    outcome: str | None = None  # ok | failed | not-run
    exit_code: int | None = None
    reads: list[Read] = field(default_factory=list)
    batch: list[BatchCall] = field(default_factory=list)
    source: str | None = None  # session_start: startup | resume | compact
    transcript_path: str | None = None
    model: str | None = None
    models: dict[str, str] = field(default_factory=dict)  # agent id -> model, when a payload says
    stop_hook_active: bool = False
    reason: str | None = None


@dataclass
class Response:
    """What the core wants the platform to do; rendered in the platform's exact contract."""

    action: str = "allow"  # allow | deny | block
    reason: str = ""
    system_message: str = ""


class Platform(Protocol):
    name: str  # what `vacant-hook NAME` and `--platform NAME` say
    cell_platform: str  # the platform part of an actor cell

    def parse(self, payload: dict[str, Any], env: dict[str, str]) -> HookCall: ...

    def render(self, call: HookCall, response: Response) -> tuple[str, int]: ...

    def install(self, root: Path, scope: str, hook_command: str) -> Path: ...

    def uninstall(self, root: Path, scope: str) -> Path | None: ...

    def doctor(self, root: Path, hook_command: str) -> list[tuple[str, bool, str]]: ...


ALIASES = {"claude-code": "claude"}


class UnknownPlatform(ValueError):
    pass


def load(name: str) -> Platform:
    """The platform module named `name` (a new platform is one new module, no registry edit)."""
    module_name = ALIASES.get(name, name)
    if not module_name.isidentifier() or module_name == "base":
        raise UnknownPlatform(f"unknown platform {name!r}")
    try:
        module = importlib.import_module(f"vacant.platforms.{module_name}")
    except ModuleNotFoundError:
        raise UnknownPlatform(f"unknown platform {name!r}") from None
    return module.PLATFORM
