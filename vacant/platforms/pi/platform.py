"""pi (@mariozechner/pi-coding-agent 0.73): an extension forwards tool calls to `vacant-hook pi`.

Facts this module relies on, measured on the pinned binary (`pi -p --provider fake --model
fake-model PROMPT`, offline against fixtures/upstreams/fake_responses.py's Chat Completions through
a provider in `~/.pi/agent/models.json`; tests/e2e/test_pi.py):
- pi has no command hooks, only TypeScript extensions, loaded in-process (jiti, no build) from
  `~/.pi/agent/extensions/*.ts` ($PI_CODING_AGENT_DIR replaces `~/.pi/agent`), the project's
  `.pi/extensions/*.ts` and every `-e PATH`; `--no-extensions` skips discovery (`-e` still loads).
  The template is `vacant/platforms/assets/pi-extension.ts`: it runs the hook command with the
  payload on stdin for session_start, input, tool_call, tool_result, the turn that ends the agent
  loop (Stop) and session_shutdown; every handler is awaited by pi.
- tool_call `{toolName, toolCallId, input}` comes before the tool runs; the extension's `{block:
  true, reason}` keeps it from running and the model reads exactly the reason as the tool's error
  (no tool_result follows). tool_result `{toolName, toolCallId, input, content, isError}`: a failing
  bash has `isError` and its exit code only in its text ("Command exited with code N", last line).
- Built-in tools: read `{path, offset?, limit?}`, bash `{command, timeout?}`, edit `{path,
  edits: [{oldText, newText}]}` (a legacy top-level oldText/newText is folded into edits), write
  `{path, content}`, and read-only grep, find, ls. Paths are relative to the session's cwd, `~`
  expanded, a leading `@` dropped.
- Stop: pi has none. The extension takes `agent_end` (the loop of one prompt ended) as one. pi's
  agent loop does not wait for an extension's turn_end or agent_end handler (a follow-up queued
  from a slow turn_end was measured to come too late), so a block sends the reason with
  `sendUserMessage` as the next prompt of the same session, and the extension's session_shutdown
  handler (which pi awaits before it disposes the session, `pi -p` included) waits until the last
  Stop let the agent stop. The Stop after a block says `stopActive`.
- The session id and file come from `ctx.sessionManager`; the model from `ctx.model` (`provider/id`).
  A run resumes with `pi -p --session <id> PROMPT`.

Module level imports the standard library only (hot path).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from vacant.core.calls import HookCall, Read, Response
from vacant.platforms.base import (
    Diagnosis,
    PlatformBase,
    advice,
    diagnosis,
    read_file_bytes,
)
from vacant.platforms.driver import DoError, Driver, parse_args, without

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hook path
if TYPE_CHECKING:
    from typing import Any  # JSON: each field is read with a check of its type

EVENT_KINDS = {
    "session_start": "session_start",
    "input": "prompt",
    "tool_call": "tool_pre",
    "tool_result": "tool_post",
    "agent_end": "stop",  # pi has no Stop: the end of the agent loop of one prompt
    "session_shutdown": "session_end",
}
FILE_TOOLS = ("write", "edit")
READ_ONLY_TOOLS = frozenset({"read", "grep", "find", "ls"})
SHELL_TOOL = "bash"
EXIT_CODE = re.compile(r"Command exited with code (\d+)\s*$")
EXTENSION_NAME = "vacant" + ".ts"  # (a file name, not a module)
TEMPLATE = Path(__file__).resolve().parents[1] / "assets" / "pi-extension.ts"  # shipped in the wheel
PLACEHOLDER = '"__VACANT_HOOK_COMMAND__"'
CANNOT_START_PLACEHOLDER = '"__VACANT_CANNOT_START__"'  # deny.CANNOT_START
EXTENSION_MARK = "// vacant-extension"
AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"


def resolve(path: object, cwd: str) -> str | None:
    """A tool's path as pi resolves it against the session's cwd (`@` dropped, `~` expanded)."""
    if not isinstance(path, str) or not path:
        return None
    path = path[1:] if path.startswith("@") else path
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))


def tool_scope(tool: str, data: dict[str, Any], cwd: str) -> list[str] | None:
    if tool in FILE_TOOLS:
        path = resolve(data.get("path"), cwd)
        return [path] if path else None
    if tool in READ_ONLY_TOOLS:
        return []
    return None  # bash, an extension's tool, anything unknown may touch anything


def tool_reads(tool: str, data: dict[str, Any], text: str, cwd: str) -> list[Read]:
    if tool == "read":
        path = resolve(data.get("path"), cwd)
        return [Read("file", path, read_file_bytes(path))] if path else []
    if tool == SHELL_TOOL:
        return [Read("command", str(data.get("command", "")), text)]
    if tool in ("grep", "find", "ls"):
        return [Read("search", str(data.get("pattern") or data.get("path") or ""), text)]
    return []


class Pi(PlatformBase):
    name = "pi"
    cell_platform = "pi"
    aliases = ("pi-coding-agent",)
    program = "pi"
    event_key = "event"
    events = EVENT_KINDS
    hook_env = ("PI_",)
    wall_refused = "pi runs vacant's extension in its own process: no wall can keep its commands from the record"
    settings_in_workspace = (".pi/extensions",)
    settings_in_home = (".pi/agent/extensions",)  # with the default $PI_CODING_AGENT_DIR
    scopes = ("project", "user")

    def headless(self, binary: str, prompt: str, model: str | None, extra: list[str]) -> list[str]:
        return [binary, "-p", *(["--model", model] if model else []), prompt, *extra]

    # -- payloads ----------------------------------------------------------------------------

    def parse(self, payload: dict[str, Any], env: dict[str, str]) -> HookCall:
        event = str(payload.get("event", ""))
        cwd = str(payload.get("cwd") or env.get("PWD") or os.getcwd())
        kind = EVENT_KINDS.get(event, "ignore")
        call = HookCall(
            kind=kind,
            session_id=str(payload.get("sessionId") or "unknown"),
            workspace=workspace(cwd),
            transcript_path=payload["sessionFile"] if isinstance(payload.get("sessionFile"), str) else None,
            stop_hook_active=bool(payload.get("stopActive")),
            source=_session_source(payload.get("reason")) if kind == "session_start" else None,
            reason=str(payload.get("reason") or "other") if kind == "session_end" else None,
        )
        model = payload.get("model")
        if isinstance(model, str) and model and kind != "session_start":
            call.model = model
        if kind == "prompt":
            origin = "extension" if payload.get("source") == "extension" else "user"
            call.reads = [Read("prompt", origin, str(payload.get("prompt", "")))]
        elif kind == "stop" and isinstance(payload.get("finalText"), str):
            call.final_text = payload["finalText"]
        elif kind in ("tool_pre", "tool_post"):
            self._tool(call, payload, cwd)
        return call

    def _tool(self, call: HookCall, payload: dict[str, Any], cwd: str) -> None:
        call.tool = str(payload.get("toolName", ""))
        data = payload["input"] if isinstance(payload.get("input"), dict) else {}
        call.tool_input = data
        call.key = str(payload.get("toolCallId", ""))
        call.cwd = cwd
        call.scope = tool_scope(call.tool, data, cwd)
        call.tool_kind, call.intent = self.intent(call.tool, data)
        if call.tool_kind in ("write", "edit", "read"):
            call.intent["path"] = resolve(call.intent.get("path"), cwd)
        if call.kind != "tool_post":
            return
        text = payload["content"] if isinstance(payload.get("content"), str) else ""
        failed = bool(payload.get("isError"))
        call.outcome = "failed" if failed else "ok"
        if call.tool == SHELL_TOOL:  # pi says a code only when it fails (an echo of the words is output)
            match = EXIT_CODE.search(text) if failed else None
            call.exit_code = int(match.group(1)) if match else (None if failed else 0)
        call.reads = tool_reads(call.tool, data, text, cwd)

    @staticmethod
    def intent(tool: str, tool_input: object) -> tuple[str | None, dict[str, Any]]:
        """pi's built-in tools as the core's tool kinds (vacant/core/calls.py TOOL_KINDS)."""
        data = tool_input if isinstance(tool_input, dict) else {}
        if tool == SHELL_TOOL:
            return "shell", {"command": data.get("command")}
        if tool == "write":
            return "write", {"path": data.get("path"), "content": data.get("content")}
        if tool == "edit":
            return "edit", _edits(data)
        if tool == "read":
            return "read", {"path": data.get("path")}
        return None, {}

    # -- responses ---------------------------------------------------------------------------

    def render(self, call: HookCall, response: Response) -> tuple[str, int]:
        """What the extension acts on: a deny (the tool does not run, the model reads the reason as
        its error), a Stop block (the reason is queued as the next user message of the same run)."""
        if response.action == "deny" and call.kind == "tool_pre":
            return json.dumps({"action": "deny", "reason": response.reason}), 0
        if response.action == "block" and call.kind == "stop":
            return json.dumps({"action": "block", "reason": response.reason}), 0
        return "", 0

    # -- installation ------------------------------------------------------------------------

    def files(self, root: Path) -> list[Path]:
        """Every file an install may write: the extension, in each scope."""
        return [self.extension_path(root, scope) for scope in self.scopes]

    def extension_path(self, root: Path, scope: str) -> Path:
        if scope in ("project", "local"):
            return Path(root).resolve() / ".pi" / "extensions" / EXTENSION_NAME
        if scope == "user":
            return agent_dir() / "extensions" / EXTENSION_NAME
        raise ValueError(f"unknown scope {scope!r}: use project (or local) or user")

    def install(self, root: Path, scope: str, hook_command: str) -> Path:
        from vacant.platforms import owned_file  # install time only

        path = self.extension_path(root, scope)
        owned_file.write("pi", path, render_extension(hook_command), EXTENSION_MARK, "extension")
        return path

    def uninstall(self, root: Path, scope: str) -> Path | None:
        from vacant.platforms import owned_file

        path = self.extension_path(root, scope)
        return path if owned_file.remove("pi", path, EXTENSION_MARK) else None

    def doctor(self, root: Path, hook_command: str) -> list[Diagnosis]:
        from vacant.platforms import owned_file  # doctor time only

        report: list[Diagnosis] = []
        installed = []
        for scope in self.scopes:
            path = self.extension_path(root, scope)
            if not path.exists():
                continue
            text = path.read_text(errors="replace")
            if EXTENSION_MARK not in text:
                report.append(diagnosis(str(path), False, f"an extension named {EXTENSION_NAME} that vacant did not write"))
                continue
            installed.append(scope)
            report.append(owned_file.command_check("pi", scope, path, text)[0])
        report.append(diagnosis("extension installed", bool(installed),
                                "vacant's extension is installed" if installed else "run `vacant init --platform pi`"))
        report.append(advice("--no-extensions", "never run pi with --no-extensions: it loads no installed extension"))
        return report


def workspace(cwd: str) -> Path:
    from vacant.core.locations import find_root

    try:
        return find_root(Path(cwd))
    except OSError:
        return Path(cwd)


def _session_source(reason: object) -> str:
    return "startup" if reason in (None, "startup", "new") else "resume"


def _edits(data: dict[str, Any]) -> dict[str, Any]:
    """pi's `edits: [{oldText, newText}]` (one legacy top-level pair folded in, as pi does)."""
    edits = data["edits"] if isinstance(data.get("edits"), list) else []
    pairs = [edit for edit in edits if isinstance(edit, dict)]
    if isinstance(data.get("oldText"), str) and isinstance(data.get("newText"), str):
        pairs.append({"oldText": data["oldText"], "newText": data["newText"]})
    return {"path": data.get("path"), "edits": [{"old_string": pair.get("oldText"), "new_string": pair.get("newText"),
                                                 "replace_all": False} for pair in pairs]}


def agent_dir() -> Path:
    """pi's global directory: $PI_CODING_AGENT_DIR, else ~/.pi/agent."""
    return Path(os.environ.get(AGENT_DIR_ENV) or Path.home() / ".pi" / "agent")


def render_extension(hook_command: str) -> str:
    from vacant.platforms.deny import CANNOT_START  # install time only
    from vacant.platforms.settings_file import InstallError

    try:
        template = TEMPLATE.read_text()
    except OSError as error:
        raise InstallError(f"the extension template {TEMPLATE} is missing ({error}): reinstall vacant") from None
    return template.replace(PLACEHOLDER, json.dumps(hook_command)).replace(CANNOT_START_PLACEHOLDER,
                                                                             json.dumps(CANNOT_START))


# -- `vacant do` ----------------------------------------------------------------------------------


class PiDriver(Driver):
    """vacant's extension through `-e <a temporary copy>`, never a file of the person's."""

    platform = "pi"
    VALUE = {"--provider", "--model", "--api-key", "--system-prompt", "--append-system-prompt", "--mode",
             "--session", "--fork", "--session-dir", "--models", "-t", "--tools", "--thinking", "-e",
             "--extension", "--skill", "--prompt-template", "--theme", "--export"}
    SESSION_OPTS = {"-c", "--continue", "-r", "--resume", "--session", "--fork", "--no-session"}

    @property
    def can_continue(self) -> bool:  # type: ignore[override]
        parsed = parse_args(self.argv[1:], self.VALUE)
        return parsed.has("-p", "--print") and not parsed.has("--no-session")

    def prepare(self) -> None:
        parsed = parse_args(self.argv[1:], self.VALUE)
        self.session = parsed.value("--session")
        installed = [PLATFORM.extension_path(self.root, scope) for scope in PLATFORM.scopes]
        if any(p.exists() and EXTENSION_MARK in p.read_text(errors="replace") for p in installed) \
                and not parsed.has("-ne", "--no-extensions"):
            return  # `vacant init --platform pi` installed it
        from vacant.platforms.settings_file import hook_command

        extension = self.tmp / EXTENSION_NAME
        extension.write_text(render_extension(hook_command("pi")))
        self.argv = [self.argv[0], "-e", str(extension), *self.argv[1:]]

    def resume(self, session: str, feedback: str) -> list[str]:
        parsed = parse_args(self.argv[1:], self.VALUE)
        if not parsed.positionals:
            raise DoError("pi was given no prompt: nothing to continue")
        return [self.argv[0], *without(parsed, self.SESSION_OPTS), "--session", session, feedback]


Pi.driver = PiDriver
PLATFORM = Pi()
