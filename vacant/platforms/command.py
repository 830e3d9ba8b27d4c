"""Any command with no hooks of its own, watched by `vacant do` (`--platform auto` on a program it
does not recognise, or `--platform command`).

There is no hook payload from the agent: `vacant do` watches the workspace (watchdog) and turns
each burst of file changes into one call of this module, the same way a hook would. So the core
keeps one entry (`HookCall` -> `Recorder`) and never learns about the watcher. What this platform
can and cannot see:

- every change the scans find, grouped by burst (a burst ends after a quiet gap); each burst is
  one step of the actor `command/<program name>`; changes the watcher missed and the final scan
  found are out-of-band steps (`gap`), never the command's;
- no reads at all (`read_coverage: none`): lineage cannot clear the command, so a flip is
  `provable` against it only in the sense of "within the recorded bursts";
- another process writing during a burst is indistinguishable from the command.

Payloads (what `vacant do` hands `parse`): `{"event": "start" | "burst" | "stop" | "end",
"session", "program", "burst" (number), "paths" (workspace paths, or null for a full scan),
"command" (the argv)}`. Stdlib only.
"""

from __future__ import annotations

from pathlib import Path

from vacant.core.calls import HookCall, Response
from vacant.platforms.base import Diagnosis, PlatformBase, diagnosis

EVENT_KINDS = {"start": "session_start", "burst": "change_set", "stop": "stop", "end": "session_end"}
BURST_TOOL = "burst"


class Command(PlatformBase):
    name = "command"
    event_key = "event"
    events = EVENT_KINDS
    @staticmethod
    def intent(tool: str, tool_input: object) -> tuple[str | None, dict[str, object]]:
        return None, {}  # a watched command makes no tool calls

    scopes: tuple[str, ...] = ()

    @staticmethod
    def files(root: Path) -> list[Path]:
        return []  # nothing is installed: `vacant do -- COMMAND` watches

    driver = None  # no hooks to install: `vacant do` records a command by watching (vacant/do/watch.py)
    cell_platform = "command"

    def parse(self, payload: dict[str, object], env: dict[str, str]) -> HookCall:
        event = str(payload.get("event", ""))
        call = HookCall(
            kind=EVENT_KINDS.get(event, "ignore"),
            session_id=str(payload.get("session") or "unknown"),
            workspace=Path(str(payload.get("workspace") or ".")),
            agent_type=str(payload.get("program") or "command"),
            source="startup" if event == "start" else None,
            reason=str(payload.get("reason") or "other") if event == "end" else None,
        )
        if call.kind == "change_set":
            paths = payload.get("paths")
            call.tool = BURST_TOOL
            call.key = f"burst-{payload.get('burst')}"
            call.scope = [str(p) for p in paths] if isinstance(paths, list) else None
            call.tool_input = {"burst": payload.get("burst"), "command": payload.get("command")}
            call.outcome = "ok"
        return call

    def render(self, call: HookCall, response: Response) -> tuple[str, int]:
        return "", 0  # nobody listens: a watched command cannot be told anything mid-run

    def install(self, root: Path, scope: str, hook_command: str) -> Path:
        from vacant.platforms.settings_file import InstallError

        raise InstallError("a plain command has no hooks to install: record it with `vacant do -- COMMAND ARGS…`")

    def uninstall(self, root: Path, scope: str) -> Path | None:
        return None

    def doctor(self, root: Path, hook_command: str) -> list[Diagnosis]:
        return [diagnosis("hooks", True, "none needed: `vacant do -- COMMAND` watches the workspace and records each "
                                "burst of changes as a step (no reads: read_coverage none)")]


PLATFORM = Command()
