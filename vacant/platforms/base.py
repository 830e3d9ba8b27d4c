"""The boundary every agent platform implements, and the normalised call the core consumes.

One module per platform under `vacant/platforms/` (the way pre-commit keeps one module per
language) exposes a `PLATFORM` object satisfying `Platform`, listed in `all_platforms.py`. The core never asks which platform it
serves: it gets a `HookCall` and returns a `Response`. Stdlib only (hot path).
"""

from __future__ import annotations

from collections import namedtuple

from vacant.core.calls import HookCall, Response
from vacant.core.safeio import read_capped

TYPE_CHECKING = False  # typing.TYPE_CHECKING, for mypy, without importing typing on the hook path
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Protocol
else:
    Protocol = object  # Platform is for mypy and readers; nothing checks it at run time

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


def edit_intent(path: object, old: object, new: object, replace_all: object) -> dict[str, Any]:
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


class Platform(Protocol):
    """What every `PLATFORM` object provides (checked by mypy; at run time a plain class)."""

    @property
    def name(self) -> str: ...  # what `vacant-hook NAME` and `--platform NAME` say

    @property
    def cell_platform(self) -> str: ...  # the platform part of an actor cell

    @property
    def driver(self) -> Any: ...  # the `vacant do` driver class (vacant/platforms/driver.py), or None: watched

    @property
    def scopes(self) -> tuple[str, ...]: ...  # where install can put the hooks (`vacant uninstall` looks in each)

    def parse(self, payload: dict[str, Any], env: dict[str, str]) -> HookCall: ...

    def render(self, call: HookCall, response: Response) -> tuple[str, int]: ...

    def intent(self, tool: str, tool_input: object) -> tuple[str | None, dict[str, Any]]: ...  # a TOOL_KIND and its input

    def install(self, root: Path, scope: str, hook_command: str) -> Any: ...

    def uninstall(self, root: Path, scope: str) -> Any: ...

    def doctor(self, root: Path, hook_command: str) -> list[Diagnosis]: ...

    def files(self, root: Path) -> list[Path]: ...  # every file an install may write, in every scope
