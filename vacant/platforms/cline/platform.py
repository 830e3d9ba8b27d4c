"""Cline CLI (cline 3.0.65): one executable per event in `.clinerules/hooks/`, each running `vacant-hook cline`.

Facts this module relies on, measured on the pinned binary (`cline --json PROMPT`, offline against
fixtures/upstreams/fake_responses.py's Chat Completions through `cline auth -p openai-compatible -b
URL`; captured payloads in fixtures/payloads/cline/):
- Hooks are files named after their event (TaskStart, TaskResume, UserPromptSubmit, PreToolUse,
  PostToolUse, TaskComplete, TaskCancel, TaskError, SessionShutdown; no extension or .sh/.py/...)
  in `<workspace>/.clinerules/hooks/`, `<config dir>/hooks/` and `~/Documents/Cline/Hooks/`
  (`--hooks-dir DIR` loaded none); every file of an event runs; the payload is on stdin. No matchers.
- The payload names its event in `hookName`, not the file's name: agent_start, agent_resume,
  prompt_submit, tool_call, tool_result, agent_end, agent_abort, agent_error, session_shutdown.
  Every payload: taskId, sessionContext.rootSessionId (what `--id` takes), workspaceRoots, agent_id.
  No model in any payload.
- tool_call `{tool_call: {id, name, input}, preToolUse: {toolName, parameters (non-strings JSON-encoded)}}`;
  tool_result `{tool_result: {id, name, input, output, error}, postToolUse: {…, success}}`. run_commands
  and read_files answer a list of `{query, result, error?, success}`; a failing command's item has
  `error: "Command exited with code N"`.
- Tools: read_files `{files: [{path}]}`, run_commands `{commands: [str]}`, editor `{path, old_text?,
  new_text, insert_line?}` (creates a missing file when there is no old_text), search_codebase
  `{queries}`, fetch_web_content `{requests: [{url}]}`, ask_question, spawn_agent, team_*. Paths absolute.
- A PreToolUse `{"cancel": true, "errorMessage": R}` does not only refuse the call: it aborts the
  whole task (the tool does not run, no further model request, no TaskComplete). A hook that fails,
  times out or prints what is not JSON lets the tool run. There is no per-call deny.
- TaskStart and TaskComplete run detached (their output is ignored): no Stop can carry feedback,
  so the pipeline only reports there (stop_rounds 0). `--id` did not resume a task headless.

Module level imports the standard library only (hot path).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from vacant.core.atomic import atomic_write
from vacant.core.calls import HookCall, Read, Response
from vacant.platforms.base import Diagnosis, PlatformBase, diagnosis, read_file_bytes
from vacant.platforms.driver import DoError, Driver, parse_args, without

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hook path
if TYPE_CHECKING:
    from typing import Any  # JSON: each field is read with a check of its type

EVENT_KINDS = {
    "agent_start": "session_start",
    "agent_resume": "session_start",
    "prompt_submit": "prompt",
    "tool_call": "tool_pre",
    "tool_result": "tool_post",
    "agent_end": "stop",
    "session_shutdown": "session_end",
}
HOOK_FILES = ("TaskStart", "TaskResume", "UserPromptSubmit", "PreToolUse", "PostToolUse", "TaskComplete",
              "SessionShutdown")
HOOKS_DIR = Path(".clinerules") / "hooks"
MARK = "# vacant-hook"
READ_ONLY_TOOLS = frozenset({"read_files", "search_codebase", "fetch_web_content", "ask_question"})
EXIT_CODE = re.compile(r"exited with code (\d+)")


def hook_script(hook_command: str) -> str:
    """One event's hook file: the payload on stdin goes to vacant's hook, its answer to Cline."""
    return f"#!/bin/sh\n{MARK}: written by vacant (`vacant uninstall --platform cline` removes it)\nexec {hook_command}\n"


class Cline(PlatformBase):
    name = "cline"
    cell_platform = "cline"
    program = "cline"
    event_key = "hookName"
    events = EVENT_KINDS
    hook_env = ("CLINE",)
    settings_in_workspace = (str(HOOKS_DIR),)
    scopes = ("project",)
    stop_rounds = 0  # TaskComplete is detached: nothing it answers reaches the model

    def headless(self, binary: str, prompt: str, model: str | None, extra: list[str]) -> list[str]:
        return [binary, "--json", *(["-m", model] if model else []), prompt, *extra]

    # -- payloads ----------------------------------------------------------------------------

    def parse(self, payload: dict[str, Any], env: dict[str, str]) -> HookCall:
        event = str(payload.get("hookName", ""))
        kind = EVENT_KINDS.get(event, "ignore")
        roots = payload["workspaceRoots"] if isinstance(payload.get("workspaceRoots"), list) else []
        context = payload["sessionContext"] if isinstance(payload.get("sessionContext"), dict) else {}
        session = context.get("rootSessionId") or payload.get("taskId") or "unknown"
        parent = payload.get("parent_agent_id")
        call = HookCall(kind=kind, session_id=str(session), workspace=Path(str(roots[0] if roots else env.get("PWD") or ".")),
                        agent_id=str(payload["agent_id"]) if parent and payload.get("agent_id") else None,
                        source="resume" if event == "agent_resume" else None,
                        reason="session_shutdown" if kind == "session_end" else None)
        if kind == "prompt":
            prompt = payload["userPromptSubmit"] if isinstance(payload.get("userPromptSubmit"), dict) else {}
            call.reads = [Read("prompt", "user", str(prompt.get("prompt") or payload.get("prompt") or ""))]
        elif kind == "stop":
            turn = payload["turn"] if isinstance(payload.get("turn"), dict) else {}
            call.final_text = str(turn.get("outputText") or "")
        elif kind in ("tool_pre", "tool_post"):
            self._tool(call, payload)
        return call

    def _tool(self, call: HookCall, payload: dict[str, Any]) -> None:
        key = "tool_call" if call.kind == "tool_pre" else "tool_result"
        data: dict[str, Any] = payload[key] if isinstance(payload.get(key), dict) else {}
        call.tool = str(data.get("name", ""))
        tool_input = data["input"] if isinstance(data.get("input"), dict) else {}
        call.tool_input = tool_input
        call.key = str(data.get("id", ""))
        call.scope = _scope(call.tool, tool_input)
        call.tool_kind, call.intent = self.intent(call.tool, tool_input)
        if call.kind == "tool_post":
            items = data["output"] if isinstance(data.get("output"), list) else [data.get("output")]
            errors = [str(item.get("error")) for item in items if isinstance(item, dict) and item.get("error")]
            failed = bool(data.get("error")) or bool(errors)
            call.outcome = "failed" if failed else "ok"
            if call.tool == "run_commands":
                match = EXIT_CODE.search(errors[0]) if errors else None
                call.exit_code = int(match.group(1)) if match else (None if failed else 0)
            call.reads = _reads(call.tool, tool_input, items)

    @staticmethod
    def intent(tool: str, tool_input: object) -> tuple[str | None, dict[str, Any]]:
        """Cline's tools as the core's tool kinds (vacant/core/calls.py TOOL_KINDS)."""
        data = tool_input if isinstance(tool_input, dict) else {}
        if tool == "run_commands":
            commands = data["commands"] if isinstance(data.get("commands"), list) else []
            return "shell", {"command": "\n".join(str(c) for c in commands)}
        if tool == "editor" and data.get("insert_line") is None:
            if data.get("old_text") is None:
                return "write", {"path": data.get("path"), "content": data.get("new_text")}
            return "edit", {"path": data.get("path"), "edits": [{"old_string": data.get("old_text"),
                                                                 "new_string": data.get("new_text"), "replace_all": False}]}
        if tool == "read_files":
            files = data["files"] if isinstance(data.get("files"), list) else []
            first = files[0] if files and isinstance(files[0], dict) else {}
            return ("read", {"path": first.get("path")}) if len(files) == 1 else (None, {})
        return None, {}

    # -- responses ---------------------------------------------------------------------------

    def render(self, call: HookCall, response: Response) -> tuple[str, int]:
        """A deny is Cline's cancel, which aborts the whole task (measured): fail closed."""
        if response.action == "deny" and call.kind == "tool_pre":
            return json.dumps({"cancel": True, "errorMessage": response.reason}), 0
        return "", 0

    # -- installation ------------------------------------------------------------------------

    def files(self, root: Path) -> list[Path]:
        return [Path(root).resolve() / HOOKS_DIR / name for name in HOOK_FILES]

    def install(self, root: Path, scope: str, hook_command: str) -> Path:
        _check_scope(scope)
        directory = Path(root).resolve() / HOOKS_DIR
        write_hooks(directory, hook_command)
        return directory / HOOK_FILES[0]

    def uninstall(self, root: Path, scope: str) -> Path | None:
        _check_scope(scope)
        directory = Path(root).resolve() / HOOKS_DIR
        return directory / HOOK_FILES[0] if remove_hooks(directory) else None

    def doctor(self, root: Path, hook_command: str) -> list[Diagnosis]:
        ours = [path for path in self.files(root) if path.is_file() and MARK in path.read_text(errors="replace")]
        report = [diagnosis("hooks installed", len(ours) == len(HOOK_FILES),
                            f"{len(ours)} of {len(HOOK_FILES)} hook files in {HOOKS_DIR}" if ours
                            else "run `vacant init --platform cline`")]
        for path in ours:
            report.append(diagnosis(str(path), os.access(path, os.X_OK), "executable" if os.access(path, os.X_OK)
                                    else "not executable: Cline cannot run it"))
        return report


def _check_scope(scope: str) -> None:
    if scope not in ("project", "local"):
        raise ValueError(f"unknown scope {scope!r}: Cline's hooks are the project's ({HOOKS_DIR})")


def _scope(tool: str, data: dict[str, Any]) -> list[str] | None:
    if tool == "editor":
        path = data.get("path")
        return [os.path.normpath(path)] if isinstance(path, str) and path else None
    if tool in READ_ONLY_TOOLS:
        return []
    return None  # run_commands, sub-agents, team tools, MCP: anything


def _reads(tool: str, data: dict[str, Any], items: list[Any]) -> list[Read]:
    texts = [str(item.get("result", "")) if isinstance(item, dict) else str(item) for item in items]
    if tool == "read_files":
        files = data["files"] if isinstance(data.get("files"), list) else []
        paths = [str(f["path"]) for f in files if isinstance(f, dict) and isinstance(f.get("path"), str)]
        return [Read("file", path, read_file_bytes(path)) for path in paths]
    if tool == "run_commands":
        commands = data["commands"] if isinstance(data.get("commands"), list) else []
        return [Read("command", str(command), text) for command, text in zip(commands, texts)]
    if tool == "search_codebase":
        return [Read("search", " | ".join(str(q) for q in data.get("queries") or []), "\n".join(texts))]
    return []


def write_hooks(directory: Path, hook_command: str) -> None:
    """Write vacant's hook file for each event; refuse to replace a file vacant did not write."""
    from vacant.platforms.settings_file import InstallError

    for name in HOOK_FILES:
        path = directory / name
        if path.exists() and MARK not in path.read_text(errors="replace"):
            raise InstallError(f"{path} exists and is not vacant's hook; move it away first")
    created = [d for d in (directory.parent, directory) if not d.exists()]
    directory.mkdir(parents=True, exist_ok=True)
    record = _record_path(directory)
    if not record.exists():
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps({"hooks": str(directory), "created_dirs": [str(d) for d in created]}))
    for name in HOOK_FILES:
        path = directory / name
        text = hook_script(hook_command)
        if not path.exists() or path.read_text(errors="replace") != text:
            atomic_write(path, text, mode=0o755)


def remove_hooks(directory: Path) -> bool:
    """Remove vacant's hook files, and the directories installing them created when empty."""
    removed = False
    for name in HOOK_FILES:
        path = directory / name
        if path.is_file() and MARK in path.read_text(errors="replace"):
            path.unlink()
            removed = True
    record_path = _record_path(directory)
    try:
        record = json.loads(record_path.read_text())
    except (OSError, ValueError):
        record = {"created_dirs": []}
    for created in reversed(record.get("created_dirs", [])):
        try:
            Path(created).rmdir()
        except OSError:
            pass
    if record_path.exists():
        record_path.unlink()
    return removed


def _record_path(directory: Path) -> Path:
    from vacant.platforms.owned_file import record_path  # install time only

    return record_path("cline", directory)


# -- `vacant do` ----------------------------------------------------------------------------------


class ClineDriver(Driver):
    """Cline loads hooks only from files: `vacant do` needs `vacant init --platform cline` first
    (`--hooks-dir DIR` was measured to load no hook file). Its Stop reports only and `--id` did not
    resume a task headless (measured), so a round after the first re-launches the task: the same
    command line with the feedback as its prompt, in the same workspace (a new task, a new run)."""

    platform = "cline"
    can_continue = True
    VALUE = {"--auto-approve", "-c", "--cwd", "--compaction", "--id", "-P", "--provider", "-k", "--key", "-m",
             "--model", "-s", "--system", "-t", "--timeout", "--config", "--data-dir", "--hooks-dir"}
    OPTIONAL = {"--thinking", "--retries"}

    def prepare(self) -> None:
        if not any(p.is_file() and MARK in p.read_text(errors="replace") for p in PLATFORM.files(self.root)):
            raise DoError("Cline loads hooks only from files (its --hooks-dir loads none): run "
                          "`vacant init --platform cline` first, then `vacant do -- cline …`")

    def resume(self, session: str, feedback: str) -> list[str]:
        """The task again with the feedback as its prompt (`--id` would name the finished task)."""
        parsed = parse_args(self.argv[1:], self.VALUE, optional=self.OPTIONAL)
        return [self.argv[0], *without(parsed, {"--id"}), feedback]


Cline.driver = ClineDriver
PLATFORM = Cline()
