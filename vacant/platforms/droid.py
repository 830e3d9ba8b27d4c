"""Factory Droid (droid 0.215.0, npm `droid`; `@factory/cli` carries the same binary): Claude-shaped
command hooks in `.factory/settings.json`.

Facts this module relies on, measured on the pinned binary (`droid exec --auto high -m
custom:MODEL PROMPT`, offline against fixtures/upstreams/fake_responses.py's Chat Completions
through a BYOK model in `~/.factory/settings.json`: `customModels: [{model, baseUrl, apiKey,
provider: "generic-chat-completion-api"}]`; no Factory login; captured payloads in
fixtures/payloads/droid/):

- Hooks: `{"hooks": {Event: [{"matcher", "hooks": [{"type": "command", "command", "timeout"}]}]}}`
  in `<project>/.factory/settings.json` and `~/.factory/settings.json`; the same events map
  without the `hooks` wrapper in `.factory/hooks.json` (what droid's own hook editor writes). The
  hooks of every file run (both project files together were measured). `timeout` is in seconds.
- Seen firing headless: SessionStart (`source: "startup"`), PreToolUse, PostToolUse, Stop
  (`stop_hook_active`), SessionEnd (`reason: "other"`). UserPromptSubmit did not fire in
  `droid exec`. There is no PostToolUseFailure: a failing command (`exit 3`) gets no PostToolUse at
  all; its result reaches only the transcript (`is_error: true`, "[Process exited with code 3]").
- Payloads carry session_id, transcript_path (`~/.factory/sessions/<cwd-slug>/<id>.jsonl`), cwd,
  permission_mode, tool_name, tool_input, tool_response (a string: a command's output ending
  "[Process exited with code N]", a file's text for Read, a JSON text for Create/Edit). **No
  tool-call id**: the transcript's assistant message holding the call (`tool_use {id, name,
  input}`, and the `modelId`) is written before PreToolUse, and its `tool_result` after
  PostToolUse, so the step key is the id of the transcript's unanswered call with this name and
  input (a digest of the call when the transcript cannot be read).
- Tools: Execute `{command, riskLevelReason, riskLevel}`, Read `{file_path, offset?, limit?}`,
  LS `{directory_path}`, Grep `{pattern, path}`, Glob `{patterns, folder}`, Create `{file_path,
  content}`, Edit `{file_path, old_str, new_str}`, Task, ToolSearch, Skill, ….
- Hook env: FACTORY_PROJECT_DIR, DROID_PROJECT_DIR and CLAUDE_PROJECT_DIR (the project root).
- Output, as Claude's: PreToolUse `hookSpecificOutput.permissionDecision: "deny"` refuses the call
  (the model reads "Error: " + `permissionDecisionReason`), no PostToolUse follows. Stop
  `{"decision": "block", "reason"}` sends the reason as the next user message in the same run (Stop
  fires again with `stop_hook_active: true`).
- `droid exec -s SESSION` (resume) needs a Factory login even with a BYOK model (it exits 1,
  "No authentication credentials"), so `vacant do` continues with a fresh `droid exec` whose
  prompt is the feedback.

Stdlib only (hot path).
"""

from __future__ import annotations

from pathlib import Path

from vacant.core.calls import HookCall, Read
from vacant.core.lazyre import Lazy
from vacant.platforms.base import Diagnosis, advice, edit_intent
from vacant.platforms.dialect import ClaudeDialect
from vacant.platforms.driver import DoError, Driver, parse_args, without

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hook path
if TYPE_CHECKING:
    from typing import Any  # a payload is JSON: each field is read with a check of its type

EVENT_KINDS = {
    "SessionStart": "session_start",
    "UserPromptSubmit": "prompt",
    "PreToolUse": "tool_pre",
    "PostToolUse": "tool_post",
    "SubagentStop": "subagent_stop",
    "Stop": "stop",
    "SessionEnd": "session_end",
}
TOOL_EVENTS = ("PreToolUse", "PostToolUse")
TIMEOUTS = {"Stop": 600, "SubagentStop": 600, "SessionStart": 120, "UserPromptSubmit": 30}
DEFAULT_TIMEOUT = 60
SHELL_TOOL = "Execute"
FILE_TOOLS = ("Create", "Edit")
READ_ONLY_TOOLS = frozenset({"Read", "LS", "Grep", "Glob", "ToolSearch", "Skill", "TaskOutput", "WebSearch",
                             "FetchUrl", "TodoWrite"})
EXIT_CODE = Lazy(r"\[Process exited with code (\d+)\]")
MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024


def _transcript_calls(path: object) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]], str | None]:
    """The transcript's tool calls in order, the results by call id, and the last model id."""
    from vacant.core import leanjson as json
    from vacant.core.safeio import read_capped

    try:
        raw = read_capped(str(path), MAX_TRANSCRIPT_BYTES) if isinstance(path, str) and path else None
    except (OSError, ValueError):
        raw = None
    calls: list[dict[str, Any]] = []
    results: dict[str, dict[str, Any]] = {}
    model = None
    for line in (raw or b"").splitlines():
        if b'"tool_use"' not in line and b'"tool_result"' not in line:
            continue
        try:
            message = json.loads(line).get("message") or {}
        except (ValueError, AttributeError):
            continue
        if message.get("role") == "assistant" and isinstance(message.get("modelId"), str):
            model = message["modelId"]
        for block in message.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                calls.append(block)
            elif isinstance(block, dict) and block.get("type") == "tool_result":
                results[str(block.get("tool_use_id"))] = block
    return calls, results, model


def call_key(tool: str, tool_input: object, transcript: object) -> tuple[str, str | None]:
    """The step key of a call (see the module's facts) and the model that made it."""
    calls, results, model = _transcript_calls(transcript)
    for block in calls:
        if block.get("name") == tool and block.get("input") == tool_input and str(block.get("id")) not in results:
            return str(block.get("id")), model
    from vacant.core import leanjson as json
    from vacant.core.sha import sha256

    text = json.dumps([tool, tool_input], sort_keys=True)
    return "droid-" + sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:20], model


def _exit_code(text: str) -> int | None:
    match = EXIT_CODE.search(text)
    return int(match.group(1)) if match else None


def _scope(tool: str, data: dict[str, Any]) -> list[str] | None:
    if tool in FILE_TOOLS:
        path = data.get("file_path")
        return [path] if isinstance(path, str) else None
    if tool in READ_ONLY_TOOLS:
        return []
    return None  # Execute, Task and unknown tools may touch anything


def _reads(tool: str, data: dict[str, Any], text: str) -> list[Read]:
    if tool == "Read":
        whole = data.get("offset") is None and data.get("limit") is None
        return [Read("file", str(data.get("file_path", "")), text if whole else None)]
    if tool in ("Grep", "Glob", "LS"):
        where = data.get("pattern") or data.get("patterns") or data.get("directory_path") or ""
        return [Read("search", str(where), text)]
    if tool == SHELL_TOOL:
        return [Read("command", str(data.get("command", "")), text)]
    if tool == "Task":
        return [Read("subagent", str(data.get("subagent_type") or "task"), text)]
    return []


class Droid(ClaudeDialect):
    name = "droid"
    display = "Droid"
    cell_platform = "factory-droid"
    aliases = ("factory", "factory-droid")
    program = "droid"
    provider = None  # BYOK: the model id names the provider, not the platform
    events = EVENT_KINDS
    hook_env = ("FACTORY", "DROID")  # FACTORY_PROJECT_DIR, DROID_PROJECT_DIR
    project_dir_env = ("FACTORY_PROJECT_DIR", "DROID_PROJECT_DIR", "CLAUDE_PROJECT_DIR")
    settings_in_workspace = (".factory/settings.json", ".factory/hooks.json")
    settings_in_home = (".factory/settings.json", ".factory/hooks.json")
    workspace_file = home_file = ".factory/settings.json"
    scopes = ("project", "user")
    matcher_events = TOOL_EVENTS
    timeouts = TIMEOUTS
    default_timeout = DEFAULT_TIMEOUT

    def headless(self, binary: str, prompt: str, model: str | None, extra: list[str]) -> list[str]:
        return [binary, "exec", "--auto", "high", *(["-m", model] if model else []), *extra, prompt]

    # -- payloads ----------------------------------------------------------------------------

    def parse_tool(self, call: HookCall, payload: dict[str, Any], env: dict[str, str]) -> None:
        """No tool-call id in the payload: the key from the transcript (see the module's facts);
        the outcome of a command from its exit line."""
        call.tool = str(payload.get("tool_name", ""))
        call.tool_input = payload.get("tool_input")
        data = call.tool_input if isinstance(call.tool_input, dict) else {}
        call.key, model = call_key(call.tool, call.tool_input, call.transcript_path)
        if model:
            call.model = model
        call.scope = _scope(call.tool, data)
        call.cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
        call.tool_kind, call.intent = self.intent(call.tool, call.tool_input)
        if call.kind != "tool_post":
            return
        response = payload.get("tool_response")
        text = response if isinstance(response, str) else ""
        call.outcome = "ok"
        if call.tool == SHELL_TOOL:
            call.exit_code = _exit_code(text)
            call.outcome = "ok" if call.exit_code in (0, None) else "failed"
        call.reads = _reads(call.tool, data, text)

    def settled(self, call: HookCall, ids: list[str]) -> dict[str, tuple[str, int | None]]:
        """Of these open calls, those the transcript holds a result of: a failed call gets no
        PostToolUse (measured), so the recorder closes it here."""
        _calls, results, _model = _transcript_calls(call.transcript_path)
        done: dict[str, tuple[str, int | None]] = {}
        for call_id in ids:
            result = results.get(call_id)
            if result is None:
                continue
            content = result.get("content")
            code = _exit_code(content) if isinstance(content, str) else None
            done[call_id] = ("failed" if result.get("is_error") else "ok", code)
        return done

    @staticmethod
    def intent(tool: str, tool_input: object) -> tuple[str | None, dict[str, object]]:
        """Droid's tools as the core's tool kinds (vacant/core/calls.py TOOL_KINDS)."""
        data = tool_input if isinstance(tool_input, dict) else {}
        if tool == SHELL_TOOL:
            return "shell", {"command": data.get("command")}
        if tool == "Create":
            return "write", {"path": data.get("file_path"), "content": data.get("content")}
        if tool == "Edit":
            return "edit", edit_intent(data.get("file_path"), data.get("old_str"), data.get("new_str"),
                                       data.get("replace_all"))
        if tool == "Read":
            return "read", {"path": data.get("file_path")}
        if tool in ("LS", "Grep", "Glob"):
            return "read", {"path": data.get("directory_path") or data.get("path") or data.get("folder")}
        return None, {}

    # -- doctor ------------------------------------------------------------------------------

    def advice_lines(self, root: Path, installed_in: list[str]) -> list[Diagnosis]:
        return [advice("autonomy", "`droid exec` without --auto runs read-only: edits and commands are refused "
                       "before any hook; give --auto low|medium|high")]


# -- `vacant do` ----------------------------------------------------------------------------------


class DroidDriver(Driver):
    """Droid loads hooks only from its settings files: `vacant do` needs `vacant init --platform
    droid` first. Its resume needs a Factory login (measured), so a round after the first is a fresh
    `droid exec` whose prompt is the feedback, in the same workspace."""

    platform = "droid"
    can_continue = True
    VALUE = {"-o", "--output-format", "--input-format", "-f", "--file", "--auto", "-s", "--session-id", "--fork",
             "-m", "--model", "-r", "--reasoning-effort", "--spec-model", "--spec-reasoning-effort", "--only-tools",
             "--add-tools", "--remove-tools", "--cwd", "--worktree-dir", "--tag", "--log-group-id",
             "--worker-model", "--worker-reasoning-effort", "--validator-model", "--validator-reasoning-effort",
             "--append-system-prompt", "--append-system-prompt-file"}
    OPTIONAL = {"-w", "--worktree"}
    PROMPT_OPTS = {"-s", "--session-id", "--fork", "-f", "--file"}

    def prepare(self) -> None:
        if not any(_ours(p) for p in PLATFORM.files(self.root)):
            raise DoError("Droid loads hooks only from its settings files: run `vacant init --platform droid` "
                          "first, then `vacant do -- droid exec …`")

    def resume(self, session: str, feedback: str) -> list[str]:
        parsed = parse_args(self.argv[1:], self.VALUE, optional=self.OPTIONAL)
        subcommand = parsed.positionals[:1]
        return [self.argv[0], *subcommand, *without(parsed, self.PROMPT_OPTS), feedback]


def _ours(path: Path) -> bool:
    from vacant.platforms import settings_file  # `vacant do` only: off the hot path

    try:
        return settings_file.MARK in path.read_text(errors="replace")
    except OSError:
        return False


Droid.driver = DroidDriver
PLATFORM = Droid()
