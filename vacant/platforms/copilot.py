"""GitHub Copilot CLI (@github/copilot 1.0.102): command hooks in `.github/hooks/*.json`.

Facts this module relies on, measured on the pinned binary (`copilot -p PROMPT --allow-all-tools
--trust-folder`, offline: COPILOT_OFFLINE=true, COPILOT_PROVIDER_BASE_URL at
fixtures/upstreams/fake_responses.py, which it speaks Chat Completions to, COPILOT_PROVIDER_API_KEY,
COPILOT_MODEL; no GitHub login; captured payloads in fixtures/payloads/copilot/):

- Hooks: `{"version": 1, "hooks": {Event: [{"type": "command", "bash", "timeoutSec"}]}}` (flat
  handlers, no matcher groups) in every `<git root>/.github/hooks/*.json` and in
  `$COPILOT_HOME/hooks/*.json` (default `~/.copilot/hooks`); the hooks of every file run. vacant
  writes its own `vacant.json` there. A headless (`-p`) run loads the repository's hooks only in a
  trusted folder (`--trust-folder`, or trusted before) or with GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS=true.
- Its own event names (sessionStart, preToolUse, postToolUse, agentStop, …) send camelCase
  payloads that name no event (`toolName`, `toolArgs`, `toolResult`: the event is only what the
  config line says). The same file may use Claude's names instead (PascalCase: SessionStart,
  UserPromptSubmit, PreToolUse, PostToolUse, Stop, SessionEnd): Copilot then sends Claude's
  payload shape, `hook_event_name` included, with Claude's tool names (view -> Read, create ->
  Write, edit -> Edit, bash -> Bash, grep -> Grep) and reads Claude's answers. vacant installs
  those: the payload names its event, so the hook needs nothing from argv.
- No payload carries a tool-call id, and none names the model. The session's `events.jsonl`
  (`$COPILOT_HOME/session-state/<session>/events.jsonl`) records `tool.execution_start` (call id,
  Copilot's tool name, arguments, model) before the PreToolUse hook runs (its writes are queued:
  usually on disk by then, not always, so the model falls back to the last one the file names)
  and `tool.execution_complete` only after the PostToolUse hook returned. The step key is the call
  itself (tool name and a digest of its input, which Pre and Post repeat unchanged) plus how many
  identical calls the file records as completed, so a Pre and its Post agree and the same call
  made again later is a step of its own. Parallel calls of one batch all get their Pre before any Post.
  Only lines holding the call's first argument (as JSON.stringify writes it) are parsed: on a
  3 MB file of 5,000 calls a lookup took 1-12 ms here (median; p95 under 22 ms).
- PostToolUse `tool_result {result_type, text_result_for_llm}`: what the model reads (a viewed
  file's text; a command's output then `<shellId: N completed with exit code M>`). A failing
  command is a PostToolUse with result_type "success"; no PostToolUseFailure fired.
- PreToolUse `hookSpecificOutput.permissionDecision: "deny"`: the tool does not run, no Post
  follows, the model reads `Denied by preToolUse hook: <reason>`. Stop `{"decision": "block",
  "reason"}`: the reason is the next user message of the same run (UserPromptSubmit with it),
  then Stop again with `stop_hook_active: true`. SessionEnd (`reason: "complete"`) fires headless.
- `disableAllHooks: true` in the repository's `.github/copilot/settings.json` or
  `settings.local.json`: no hook runs at all (in `~/.copilot/settings.json` the repository's
  hooks still ran). The gate guards those files like the hooks file; `vacant doctor` says when
  one turns the hooks off.
- Hook env: CLAUDE_PROJECT_DIR and COPILOT_PROJECT_DIR (the project), COPILOT_HOOK_DIR, COPILOT_CLI=1.

Stdlib only (hot path).
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

from vacant.core.sha import sha256

from vacant.core.calls import HookCall, Read
from vacant.platforms.base import Diagnosis, advice, diagnosis, edit_intent
from vacant.platforms.dialect import ClaudeDialect
from vacant.platforms.driver import DoError, Driver, Parsed, parse_args, without

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hook path
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any  # a payload is JSON: each field is read with a check of its type

EVENT_KINDS = {
    "SessionStart": "session_start",
    "UserPromptSubmit": "prompt",
    "PreToolUse": "tool_pre",
    "PostToolUse": "tool_post",
    "Stop": "stop",
    "SessionEnd": "session_end",
}
TIMEOUTS = {"Stop": 600, "SessionStart": 120, "UserPromptSubmit": 30}
DEFAULT_TIMEOUT = 60
HOOKS_FILE = "vacant.json"
# Claude's names Copilot gives its tools in these payloads, and its own (the events.jsonl's)
TOOLS = {"view": "Read", "create": "Write", "edit": "Edit", "bash": "Bash", "grep": "Grep", "glob": "Glob",
         "web_fetch": "WebFetch"}
FILE_TOOLS = ("Write", "Edit")
READ_ONLY_TOOLS = frozenset({"Read", "Grep", "Glob", "WebFetch", "report_intent", "update_todo", "read_bash",
                             "list_bash"})
EXIT_CODE = re.compile(r"<shellId: [^>]*completed with exit code (\d+)>")
SESSION_ID = re.compile(r"^[A-Za-z0-9._-]{1,200}$")
MAX_EVENTS_BYTES = 64 * 1024 * 1024
PROMPT_MODE_HOOKS_ENV = "GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS"


def canonical(tool: str) -> str:
    return TOOLS.get(tool, tool)


def step_key(tool: str, tool_input: object) -> str:
    """The call itself as its key: Copilot's Pre/Post carry no id but repeat name and input."""
    text = json.dumps([canonical(tool), tool_input], sort_keys=True, separators=(",", ":"), default=str)
    return "copilot-" + sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:20]


def events_path(session_id: str, env: dict[str, str]) -> str | None:
    """The session's events.jsonl (None for a session id that is not a plain name)."""
    if not SESSION_ID.match(session_id) or session_id in (".", ".."):
        return None
    home = env.get("COPILOT_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".copilot")
    return os.path.join(home, "session-state", session_id, "events.jsonl")


def read_events(path: str | None) -> bytes:
    from vacant.core.safeio import read_capped

    try:
        return read_capped(path, MAX_EVENTS_BYTES) if path else b""
    except (OSError, ValueError):
        return b""


def _lines(raw: bytes, needle: bytes) -> Iterator[bytes]:
    at = raw.find(needle)
    while at != -1:
        start = raw.rfind(b"\n", 0, at) + 1
        end = raw.find(b"\n", at)
        end = len(raw) if end == -1 else end
        yield raw[start:end]
        at = raw.find(needle, end)


MODEL_FIELD = re.compile(rb'"(?:model|selectedModel)"\s*:\s*"([^"\\]{1,200})"')
TAIL_BYTES = 256 * 1024


def last_model(raw: bytes) -> str | None:
    """The model the events file names last (its session start names the selected one)."""
    for chunk in (raw[-TAIL_BYTES:], raw):
        found = MODEL_FIELD.findall(chunk)
        if found:
            return str(found[-1].decode("utf-8", "replace"))
    return None


START, COMPLETE = b'"tool.execution_start"', b'"tool.execution_complete"'


def _call_id(call: str) -> bytes:
    return b'"toolCallId":' + json.dumps(call, ensure_ascii=False).encode("utf-8", "surrogateescape")


def _needle(tool_input: object) -> bytes:
    """Bytes every events-file line recording this call holds: its first short argument as
    JSON.stringify writes it (compact, in the model's order, non-ASCII as it is, which json.dumps
    with ensure_ascii off matches but for a float such as 1.0). A line it stops wrongly only makes
    a repeat share its first step's key, for the Pre and the Post alike."""
    if isinstance(tool_input, dict):
        for name, value in tool_input.items():
            pair = json.dumps({name: value}, ensure_ascii=False, separators=(",", ":"), default=str)[1:-1]
            if len(pair) <= 300:
                return pair.encode("utf-8", "surrogateescape")
    return b""


def calls_like(raw: bytes, tool: str, tool_input: object) -> tuple[int, str | None]:
    """How many calls like this one the events file records as completed, and the model of the
    last one started. Copilot queues its writes to the file: a call's own start is usually there
    when its Pre runs, not always (measured), so the model falls back to the last one named. A
    completion is written after the Post returns and a model round trip before the next call."""
    done, model, _ = _calls_like(raw, tool, tool_input)
    return done, model


START_WAIT_S = 0.5  # how long a Pre waits for its call's queued start line (it is usually there already)


def calls_like_at_pre(path: str | None, tool: str, tool_input: object) -> tuple[int, str | None]:
    """calls_like at a Pre, which waits up to START_WAIT_S for the call's own start line while
    Copilot flushes its queued writes: without it, a session's first call could find no model named
    at all (seen: 1 run in 3 of the e2e test). No wait where no session directory exists: a
    Copilot that keeps no events file costs nothing."""
    done, model, seen = _calls_like(read_events(path), tool, tool_input)
    if seen or not path or not os.path.isdir(os.path.dirname(path)):
        return done, model
    deadline = time.monotonic() + START_WAIT_S
    while not seen and time.monotonic() < deadline:
        time.sleep(0.01)
        done, model, seen = _calls_like(read_events(path), tool, tool_input)
    return done, model


def _calls_like(raw: bytes, tool: str, tool_input: object) -> tuple[int, str | None, bool]:
    """calls_like, and whether some call like this one has its start in the file."""
    key = step_key(tool, tool_input)
    started: dict[str, str | None] = {}
    seen = set()
    for line in _lines(raw, _needle(tool_input) or START):  # only the lines that may record this call
        if START not in line or line in seen:
            continue
        seen.add(line)
        try:
            data = json.loads(line).get("data") or {}
        except (ValueError, AttributeError):
            continue
        if isinstance(data, dict) and step_key(str(data.get("toolName", "")), data.get("arguments")) == key:
            started[str(data.get("toolCallId"))] = data.get("model") if isinstance(data.get("model"), str) else None
    if not started:
        return 0, last_model(raw), False
    done = [call for call in started if any(COMPLETE in line for line in _lines(raw, _call_id(call)))]
    return len(done), list(started.values())[-1] or last_model(raw), True


def _scope(tool: str, data: dict[str, Any]) -> list[str] | None:
    if tool in FILE_TOOLS:
        path = data.get("path")
        return [path] if isinstance(path, str) else None
    if tool in READ_ONLY_TOOLS:
        return []
    return None  # the shell, a sub-agent and unknown tools may touch anything


def _reads(tool: str, data: dict[str, Any], text: str | None) -> list[Read]:
    if tool == "Read":
        path = str(data.get("path", ""))
        whole = data.get("view_range") is None and not os.path.isdir(path)
        # a part of the file (or a directory's listing): the recorder takes the bytes from the state
        return [Read("file", path, text if whole else None)]
    if tool in ("Grep", "Glob"):
        return [Read("search", str(data.get("pattern") or data.get("path") or ""), text or "")]
    if tool == "Bash":
        return [Read("command", str(data.get("command", "")), text or "")]
    if tool == "WebFetch":
        return [Read("url", str(data.get("url") or ""), text or "")]
    return []


class Copilot(ClaudeDialect):
    """Claude's dialect in flat handlers (no matcher groups), in a hooks file of vacant's own."""

    name = "copilot"
    display = "Copilot CLI"
    cell_platform = "copilot-cli"
    aliases = ("copilot-cli", "github-copilot")
    program = "copilot"
    provider = None  # GitHub's models or any BYOK endpoint: the model id names it, not the platform
    events = EVENT_KINDS
    hook_env = ("COPILOT",)  # COPILOT_PROJECT_DIR, COPILOT_HOME (and CLAUDE_PROJECT_DIR)
    project_dir_env = ('COPILOT_PROJECT_DIR', 'CLAUDE_PROJECT_DIR')
    # the gate guards the hooks file and the settings whose `disableAllHooks` turns them off (measured: the
    # repository's settings.json or settings.local.json with it true, and no hook ran)
    settings_in_workspace = (f".github/hooks/{HOOKS_FILE}", ".github/copilot/settings.json",
                             ".github/copilot/settings.local.json")
    settings_in_home = (f".copilot/hooks/{HOOKS_FILE}", ".copilot/settings.json", ".copilot/config.json")
    workspace_file = f".github/hooks/{HOOKS_FILE}"
    home_file = f"hooks/{HOOKS_FILE}"  # under $COPILOT_HOME
    scopes = ("project", "user")  # `local` is the project's file: Copilot has no uncommitted one
    timeouts = TIMEOUTS
    default_timeout = DEFAULT_TIMEOUT
    command_key = "bash"
    install_defaults = {"version": 1}  # noqa: RUF012 - never mutated

    def headless(self, binary: str, prompt: str, model: str | None, extra: list[str]) -> list[str]:
        return [binary, "--allow-all-tools", "--trust-folder", *(["--model", model] if model else []), *extra,
                "-p", prompt]

    # -- payloads ----------------------------------------------------------------------------

    def parse_tool(self, call: HookCall, payload: dict[str, Any], env: dict[str, str]) -> None:
        call.tool = canonical(str(payload.get("tool_name", "")))
        call.tool_input = payload.get("tool_input")
        data = call.tool_input if isinstance(call.tool_input, dict) else {}
        path = events_path(call.session_id, env)
        if call.kind == "tool_pre":
            done, model = calls_like_at_pre(path, call.tool, call.tool_input)
        else:
            done, model = calls_like(read_events(path), call.tool, call.tool_input)
        key = step_key(call.tool, call.tool_input)
        call.key = f"{key}.{done}" if done else key
        call.model = model  # no payload names it; the events file does, per call
        call.scope = _scope(call.tool, data)
        call.cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
        call.tool_kind, call.intent = self.intent(call.tool, call.tool_input)
        if call.kind != "tool_post":
            return
        result: dict[str, Any] = payload["tool_result"] if isinstance(payload.get("tool_result"), dict) else {}
        text = result.get("text_result_for_llm") if isinstance(result.get("text_result_for_llm"), str) else None
        call.outcome = "ok" if result.get("result_type", "success") == "success" else "failed"
        if call.tool == "Bash":
            match = EXIT_CODE.search(text or "")
            call.exit_code = int(match.group(1)) if match else (0 if call.outcome == "ok" else None)
            call.outcome = "ok" if call.exit_code == 0 else "failed"
        call.reads = _reads(call.tool, data, text)

    @staticmethod
    def intent(tool: str, tool_input: object) -> tuple[str | None, dict[str, Any]]:
        """Copilot's tools as the core's tool kinds (vacant/core/calls.py TOOL_KINDS)."""
        data = tool_input if isinstance(tool_input, dict) else {}
        tool = canonical(tool)
        if tool == "Bash":
            return "shell", {"command": data.get("command")}
        if tool == "Write":
            return "write", {"path": data.get("path"), "content": data.get("file_text")}
        if tool == "Edit":
            return "edit", edit_intent(data.get("path"), data.get("old_str"), data.get("new_str"), False)
        if tool in ("Read", "Grep", "Glob"):
            return "read", {"path": data.get("path")}
        return None, {}

    # -- installation ------------------------------------------------------------------------

    def user_dir(self) -> Path:
        home = os.environ.get("COPILOT_HOME")
        return Path(home) if home else Path.home() / ".copilot"

    def hooks_block(self, command: str) -> dict[str, list[dict[str, Any]]]:
        return {event: [{"type": "command", "bash": command, "timeoutSec": TIMEOUTS.get(event, DEFAULT_TIMEOUT)}]
                for event in EVENT_KINDS}

    def validate_settings(self, settings: dict[str, object]) -> list[str]:
        return validate_settings(settings)

    # -- doctor ------------------------------------------------------------------------------

    def switches(self, path: Path, settings: dict[str, object], ours: int) -> list[Diagnosis]:
        return []  # the hooks file has none: the repository's settings have (advice_lines)

    def our_commands(self, settings: dict[str, object]) -> set[str]:
        return _our_commands(settings)

    def advice_lines(self, root: Path, installed_in: list[str]) -> list[Diagnosis]:
        report = [diagnosis(f"{root / name} disableAllHooks", False, "disableAllHooks is true: no hook runs")
                  for name in REPO_SETTINGS if _disables_hooks(root / name)]
        report.append(advice("trusted folder", "headless (-p), Copilot CLI loads the repository's hooks only in a "
                             "trusted folder: pass --trust-folder (or trust it once interactively), or install with "
                             "--scope user"))
        return report


def validate_settings(settings: dict[str, object]) -> list[str]:
    """What in a hooks file would keep a vacant hook from running."""
    problems = []
    if settings.get("version", 1) != 1:
        problems.append(f"version is {settings.get('version')!r}; Copilot CLI reads version 1")
    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict):
        return [*problems, "`hooks` must be an object of event name -> list of hooks"]
    for event, handlers in hooks.items():
        if not isinstance(handlers, list):
            problems.append(f"hooks.{event} must be a list")
            continue
        for h, handler in enumerate(handlers):
            where = f"hooks.{event}[{h}]"
            if not isinstance(handler, dict):
                problems.append(f"{where} must be an object")
            elif handler.get("type") == "command" and not isinstance(handler.get("bash"), str):
                problems.append(f"{where}.bash must be a string")
            elif not isinstance(handler.get("timeoutSec", 1), (int, float)) or isinstance(handler.get("timeoutSec"), bool):
                problems.append(f"{where}.timeoutSec must be a number of seconds")
    return problems


REPO_SETTINGS = (".github/copilot/settings.json", ".github/copilot/settings.local.json")


def _disables_hooks(path: Path) -> bool:
    try:
        settings = json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    return isinstance(settings, dict) and settings.get("disableAllHooks") is True


def _our_commands(settings: dict[str, object]) -> set[str]:
    from vacant.platforms.settings_file import MARK  # doctor time only

    hooks = settings.get("hooks")
    return {str(h["bash"]) for handlers in (hooks.values() if isinstance(hooks, dict) else ())
            if isinstance(handlers, list) for h in handlers
            if isinstance(h, dict) and MARK in str(h.get("bash", ""))}


# -- `vacant do` ----------------------------------------------------------------------------------


class CopilotDriver(Driver):
    """vacant's hooks through a hooks directory of the run's own: a copy of the person's
    $COPILOT_HOME would lose their login, so the run gets the project's `.github/hooks/vacant.json`
    for its duration (refused when a file of that name is there already) and repository hooks in
    prompt mode (GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS=true); `close` takes it out again."""

    platform = "copilot"
    can_continue = True
    VALUE = {"-p", "--prompt", "--model", "--agent", "--config-dir", "--log-dir", "--log-level", "--add-dir",
             "--allow-tool", "--deny-tool", "--output-format", "--stream"}
    OPTIONAL = {"--resume"}  # `--resume` alone picks a session; `--resume=ID` names one
    SESSION_OPTS = {"--resume", "--continue"}

    def parsed(self) -> Parsed:
        return parse_args(self.argv[1:], self.VALUE, set(), self.OPTIONAL)

    def prepare(self) -> None:
        self.hooks = PLATFORM.settings_path(self.root, "project")
        if self.hooks.exists():
            raise DoError(f"{self.hooks} exists: `vacant do` runs Copilot CLI with a hooks file of its own there "
                          "(run `vacant uninstall --platform copilot` first, or run copilot itself)")
        self.created = [d for d in (self.hooks.parent.parent, self.hooks.parent) if not d.exists()]
        self.hooks.parent.mkdir(parents=True, exist_ok=True)
        from vacant.platforms.settings_file import hook_command  # `vacant do` only

        block = PLATFORM.hooks_block(hook_command("copilot"))
        self.hooks.write_text(json.dumps({"version": 1, "hooks": block}, indent=2) + "\n")
        self.env[PROMPT_MODE_HOOKS_ENV] = "true"
        self.session = None

    def close(self) -> None:
        from vacant.platforms.settings_file import MARK

        hooks = getattr(self, "hooks", None)  # set by prepare, which may not have run
        if hooks is None or not hooks.exists() or MARK not in hooks.read_text(errors="replace"):
            return
        hooks.unlink()
        for directory in reversed(getattr(self, "created", [])):
            try:
                directory.rmdir()  # only when empty
            except OSError:
                pass

    def resume(self, session: str, feedback: str) -> list[str]:
        parsed = self.parsed()
        # --trust-folder cannot go with --resume (measured): the resumed session keeps the trust
        return [self.argv[0], *without(parsed, self.SESSION_OPTS | {"-p", "--prompt", "--trust-folder"}),
                f"--resume={session}", "-p", feedback]


Copilot.driver = CopilotDriver
PLATFORM = Copilot()
