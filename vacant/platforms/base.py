"""The boundary every agent platform implements, and the normalised call the core consumes.

One module per platform under `vacant/platforms/` (the way pre-commit keeps one module per
language) exposes a `PLATFORM` object satisfying `Platform`, listed in `all_platforms.py`. The core never asks which platform it
serves: it gets a `HookCall` and returns a `Response`. Stdlib only (hot path).
"""

from __future__ import annotations

from collections import namedtuple

from vacant.core.calls import HookCall, Response
from vacant.core.safeio import read_capped

# One line of `vacant doctor`: status ok | warn | fail. Only a fail (a broken install: hooks that
# will not run, or not there at all) makes doctor exit non-zero; a warn is advice.
Diagnosis = namedtuple("Diagnosis", "name status detail")
STATUSES = ("ok", "warn", "fail")


def diagnosis(name: str, ok: bool, detail: str) -> Diagnosis:
    return Diagnosis(name, "ok" if ok else "fail", detail)


def advice(name: str, detail: str) -> Diagnosis:
    return Diagnosis(name, "warn", detail)

MAX_READ_BYTES = 32 * 1024 * 1024


def read_file_bytes(path: str) -> bytes | None:
    """A file's bytes as a read's content (None when gone, unreadable, or too big to keep)."""
    try:
        return read_capped(path, MAX_READ_BYTES)  # never a FIFO's or a device's "content"
    except (OSError, TypeError, ValueError):
        return None


def edit_intent(path: object, old: object, new: object, replace_all: object) -> dict:
    return {"path": path, "edits": [{"old_string": old, "new_string": new, "replace_all": bool(replace_all)}]}


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
    from typing import (  # built on first use: the hook's hot path never imports typing
        Any,
        Protocol,
    )

    class Platform(Protocol):
        name: str  # what `vacant-hook NAME` and `--platform NAME` say
        cell_platform: str  # the platform part of an actor cell

        def parse(self, payload: dict[str, Any], env: dict[str, str]) -> HookCall: ...

        def render(self, call: HookCall, response: Response) -> tuple[str, int]: ...

        def intent(self, tool: str, tool_input: object) -> tuple[str | None, dict]: ...  # a TOOL_KIND and its input

        driver: Any  # the `vacant do` driver class (vacant/platforms/driver.py), or None: recorded by watching

        def install(self, root, scope: str, hook_command: str): ...

        def uninstall(self, root, scope: str): ...

        def doctor(self, root, hook_command: str) -> list[Diagnosis]: ...

        scopes: tuple[str, ...]  # where install can put the hooks (`vacant uninstall` looks in each)

        def files(self, root) -> list: ...  # every file an install may write, in every scope

    return Platform


def __getattr__(name: str):
    if name == "Platform":
        return _protocol()
    raise AttributeError(name)
