"""Qwen Code (@qwen-code/qwen-code 0.24.4): Claude-shaped command hooks in `.qwen/settings.json`.

Facts this module relies on, measured on the pinned binary (`qwen --auth-type openai
--approval-mode yolo PROMPT`, offline against fixtures/upstreams/fake_responses.py through
OPENAI_BASE_URL; captured payloads in fixtures/payloads/qwen/):

- Hooks: `{"hooks": {Event: [{"matcher", "hooks": [{"type": "command", "command", "timeout"}]}]}}`
  in `<project>/.qwen/settings.json`, `~/.qwen/settings.json` and the system settings file
  ($QWEN_CODE_SYSTEM_SETTINGS_PATH overrides its path); the hooks of every file run. There is no
  local (uncommitted) settings file. An entry with an unknown `type` is skipped alone (the other
  hooks of that file still run). `timeout` is in seconds. Qwen rewrites the project file it
  loads (adds `"$version": 4`), so after a run an uninstall keeps that and removes only vacant's hooks.
- Its write_file and edit refuse a file this session has not read (a resumed session included).
- Seen firing headless: SessionStart (`source`, `model`), Notification, UserPromptSubmit (again
  before every model request after a tool, with `prompt: ""`), PreToolUse, PostToolUse,
  PostToolUseFailure (a failing command, a missing file; `error` holds "Exit Code: N"),
  PostToolBatch, Stop. No SessionEnd in a headless run (`vacant do` closes the run).
- Every tool payload carries `tool_call_id`, the model's call id, which PostToolBatch also uses;
  its `tool_use_id` differs between Pre/Post (`toolu_…`) and the batch (the call id), so the
  step key is `tool_call_id`. PostToolUse `tool_response` is `{llmContent, returnDisplay}`:
  `llmContent` is what the model reads (a file's text, a command's "Output: … Exit Code: N").
- Hook env: CLAUDE_PROJECT_DIR, QWEN_PROJECT_DIR and GEMINI_PROJECT_DIR (the project root),
  QWEN_CODE_SESSION_ID, QWEN_CODE_MODEL (the model id, on every hook).
- Output, as Claude's: PreToolUse `hookSpecificOutput.permissionDecision: "deny"` (or "ask": in a
  headless run an ask is refused alike) sends exactly `permissionDecisionReason` to the model as
  the tool's result, and no Post follows (only PostToolBatch, status "error"); exit 2 blocks with
  stderr as the reason; exit 1, a crash or a hook past its timeout fails open (the tool runs).
  Stop `{"decision": "block", "reason"}` sends the reason as the next user message in the same
  run (Stop fires again with `stop_hook_active: true`); plain text on stdout is ignored.

Stdlib only (hot path).
"""

from __future__ import annotations

import re
from pathlib import Path

from vacant.core.calls import BatchCall, HookCall, Read
from vacant.platforms.base import Diagnosis, advice, edit_intent
from vacant.platforms.dialect import ClaudeDialect, SettingsDriver
from vacant.platforms.driver import DoError, Parsed, parse_args, run_session, without

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hook path
if TYPE_CHECKING:
    from typing import Any  # a payload is JSON: each field is read with a check of its type

EVENT_KINDS = {
    "SessionStart": "session_start",
    "UserPromptSubmit": "prompt",
    "PreToolUse": "tool_pre",
    "PostToolUse": "tool_post",
    "PostToolUseFailure": "tool_post",
    "PostToolBatch": "tool_batch",
    "SubagentStart": "subagent_start",
    "SubagentStop": "subagent_stop",
    "Stop": "stop",
    "SessionEnd": "session_end",
}
TOOL_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch")
TIMEOUTS = {"Stop": 600, "SubagentStop": 600, "SessionStart": 120, "UserPromptSubmit": 30}
DEFAULT_TIMEOUT = 60
HOOK_TYPES = ("command", "http", "prompt")
SHELL_TOOL = "run_shell_command"
FILE_TOOLS = {"write_file": "file_path", "edit": "file_path", "notebook_edit": "notebook_path"}
READ_ONLY_TOOLS = frozenset({"read_file", "read_many_files", "grep_search", "glob", "list_directory", "web_fetch",
                             "web_search", "todo_write", "skill", "tool_search", "get_goal", "list_agents",
                             "ask_user_question", "exit_plan_mode", "save_memory"})
EXIT_CODE = re.compile(r"^Exit Code: (\d+)", re.MULTILINE)
SYSTEM_SETTINGS_ENV = "QWEN_CODE_SYSTEM_SETTINGS_PATH"
SYSTEM_SETTINGS = "/etc/qwen-code/settings.json"  # Linux default


def _scope(tool: str, tool_input: object) -> list[str] | None:
    data = tool_input if isinstance(tool_input, dict) else {}
    if tool in FILE_TOOLS:
        path = data.get(FILE_TOOLS[tool])
        return [path] if isinstance(path, str) else None
    if tool in READ_ONLY_TOOLS:
        return []
    return None  # the shell, a sub-agent and unknown tools may touch anything


def _llm_text(response: object) -> str | None:
    if isinstance(response, dict) and isinstance(response.get("llmContent"), str):
        return str(response["llmContent"])
    return response if isinstance(response, str) else None


def _reads(tool: str, data: dict[str, Any], text: str | None) -> list[Read]:
    if tool == "read_file":
        whole = data.get("offset") is None and data.get("limit") is None
        # a part of the file: the recorder takes its bytes from the recorded state instead
        return [Read("file", str(data.get("file_path", "")), text if whole else None)]
    if tool in ("grep_search", "glob", "list_directory"):
        return [Read("search", str(data.get("pattern") or data.get("path") or ""), text or "")]
    if tool == SHELL_TOOL:
        return [Read("command", str(data.get("command", "")), text or "")]
    if tool == "web_fetch":
        return [Read("url", str(data.get("url") or data.get("prompt") or ""), text or "")]
    if tool == "web_search":
        return [Read("url", "search:" + str(data.get("query", "")), text or "")]
    if tool == "agent":
        return [Read("subagent", str(data.get("subagent_type") or "agent"), text or "")]
    return []


class Qwen(ClaudeDialect):
    name = "qwen"
    display = "Qwen"
    cell_platform = "qwen-code"
    aliases = ("qwen-code",)
    program = "qwen"
    provider = None  # any OpenAI-compatible endpoint: the model id names it, not the platform
    events = EVENT_KINDS
    hook_env = ("QWEN",)  # QWEN_PROJECT_DIR, QWEN_CODE_SESSION_ID, QWEN_CODE_MODEL (and CLAUDE_PROJECT_DIR)
    project_dir_env = ('QWEN_PROJECT_DIR', 'CLAUDE_PROJECT_DIR')
    session_env = "QWEN_CODE_SESSION_ID"
    settings_in_workspace = (".qwen/settings.json",)
    settings_in_home = (".qwen/settings.json",)
    workspace_file = home_file = ".qwen/settings.json"
    scopes = ("project", "user")  # `local` is the project's .qwen/settings.json: Qwen has no local file
    matcher_events = TOOL_EVENTS
    timeouts = TIMEOUTS
    default_timeout = DEFAULT_TIMEOUT
    hook_types = HOOK_TYPES
    system_settings_env = SYSTEM_SETTINGS_ENV
    system_settings = SYSTEM_SETTINGS

    def headless(self, binary: str, prompt: str, model: str | None, extra: list[str]) -> list[str]:
        return [binary, "--approval-mode", "yolo", "--output-format", "json", *(["--model", model] if model else []),
                *extra, prompt]

    # -- payloads ----------------------------------------------------------------------------

    def parse(self, payload: dict[str, Any], env: dict[str, str]) -> HookCall:
        call = super().parse(payload, env)  # Claude's fields, and sub-agents, the model and a tool batch
        call.agent_id = payload.get("agent_id") or None
        call.agent_type = payload.get("agent_type") or None
        model = env.get("QWEN_CODE_MODEL") or payload.get("model")
        if isinstance(model, str) and model and call.kind != "session_start":
            call.model = model
        if call.kind == "tool_batch":
            call.batch = [BatchCall(key=str(item.get("tool_call_id") or item.get("tool_use_id") or ""),
                                    tool=str(item.get("tool_name", "")), tool_input=item.get("tool_input"),
                                    response_text=str(item.get("error") or _batch_text(item)))
                          for item in payload.get("tool_calls") or [] if isinstance(item, dict)]
        elif call.kind == "subagent_stop" and isinstance(payload.get("last_assistant_message"), str):
            call.reads = [Read("subagent", str(call.agent_id), payload["last_assistant_message"])]
        return call

    def parse_tool(self, call: HookCall, payload: dict[str, Any], env: dict[str, str]) -> None:
        call.tool = str(payload.get("tool_name", ""))
        call.tool_input = payload.get("tool_input")
        data = call.tool_input if isinstance(call.tool_input, dict) else {}
        call.key = str(payload.get("tool_call_id") or payload.get("tool_use_id") or "")
        call.scope = _scope(call.tool, call.tool_input)
        call.cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
        call.tool_kind, call.intent = self.intent(call.tool, call.tool_input)
        if call.kind != "tool_post":
            return
        if payload.get("hook_event_name") == "PostToolUseFailure":
            error = str(payload.get("error", ""))
            match = EXIT_CODE.search(error)
            call.outcome, call.exit_code = "failed", int(match.group(1)) if match else None
            call.reads = [Read("command", str(data.get("command", "")), error)] if call.tool == SHELL_TOOL else []
            return
        text = _llm_text(payload.get("tool_response"))
        call.outcome = "ok"
        if call.tool == SHELL_TOOL:
            match = EXIT_CODE.search(text or "")
            call.exit_code = int(match.group(1)) if match else 0
            call.outcome = "ok" if call.exit_code == 0 else "failed"
        call.reads = _reads(call.tool, data, text)

    @staticmethod
    def intent(tool: str, tool_input: object) -> tuple[str | None, dict[str, Any]]:
        """Qwen's tools as the core's tool kinds (vacant/core/calls.py TOOL_KINDS)."""
        data = tool_input if isinstance(tool_input, dict) else {}
        if tool == SHELL_TOOL:
            return "shell", {"command": data.get("command")}
        if tool == "write_file":
            return "write", {"path": data.get("file_path"), "content": data.get("content")}
        if tool == "edit":
            return "edit", edit_intent(data.get("file_path"), data.get("old_string"), data.get("new_string"),
                                       data.get("replace_all"))
        if tool == "notebook_edit":
            return "notebook", {"path": data.get("notebook_path")}
        if tool == "read_file":
            return "read", {"path": data.get("file_path")}
        if tool in ("grep_search", "glob", "list_directory"):
            return "read", {"path": data.get("path")}
        return None, {}

    # -- doctor ------------------------------------------------------------------------------

    def advice_lines(self, root: Path, installed_in: list[str]) -> list[Diagnosis]:
        return [advice("--safe-mode", "never run qwen with --safe-mode: it disables every hook"),
                advice("approval mode", "in a headless run, only --approval-mode yolo (or auto-edit for edits) "
                       "lets tools run; a refused call reaches PreToolUse but never PostToolUse")]


def _batch_text(item: dict[str, Any]) -> str:
    response = item.get("tool_response")
    if isinstance(response, dict):
        for part in response.get("response_parts") or []:
            answer = ((part or {}).get("functionResponse") or {}).get("response") or {}
            if isinstance(answer, dict):
                return str(answer.get("output") or answer.get("error") or "")
    return ""


# -- `vacant do` ----------------------------------------------------------------------------------


class QwenDriver(SettingsDriver):
    """vacant's hooks through a system settings file of the run's own ($QWEN_CODE_SYSTEM_SETTINGS_PATH:
    the person's system settings merged with the hooks), never a settings file of theirs; a new
    session pinned to an id of the run's."""

    platform = "qwen"
    facts = Qwen
    can_continue = True
    VALUE = {"-m", "--model", "-p", "--prompt", "-i", "--prompt-interactive", "--system-prompt",
             "--append-system-prompt", "--output-style", "--approval-mode", "--auth-type", "--openai-api-key",
             "--openai-base-url", "-o", "--output-format", "--input-format", "--json-fd", "--json-file",
             "--json-schema", "--input-file", "-r", "--resume", "--session-id", "--worktree", "--max-session-turns",
             "--max-wall-time", "--max-tool-calls", "--max-subagent-depth", "--channel", "--mcp-config", "--proxy",
             "--openai-logging-dir", "--sandbox-image", "--telemetry-target", "--telemetry-otlp-endpoint",
             "--telemetry-otlp-protocol", "--telemetry-outfile"}
    VARIADIC = {"--allowed-tools", "--allowed-mcp-server-names", "-e", "--extensions", "--include-directories",
                "--add-dir", "--core-tools", "--exclude-tools", "--fallback-model", "--disabled-slash-commands"}
    SESSION_OPTS = {"-r", "--resume", "--session-id", "-c", "--continue", "--fork-session"}

    def parsed(self) -> Parsed:
        return parse_args(self.argv[1:], self.VALUE, self.VARIADIC)

    def prepare(self) -> None:
        parsed = self.parsed()
        if parsed.has("--safe-mode"):
            raise DoError("qwen --safe-mode disables every hook: vacant do cannot record that run")
        self.write_settings(self.tmp / "qwen-system-settings.json")
        self.session = parsed.value("--session-id", "-r", "--resume")
        self.pin = self.session is None and not parsed.has("-c", "--continue")
        if self.pin:
            import uuid  # `vacant do` only

            self.session = str(uuid.uuid4())

    def first(self) -> list[str]:
        pin = ["--session-id", str(self.session)] if self.pin else []
        return [*self.argv, *pin]

    def resume(self, session: str, feedback: str) -> list[str]:
        parsed = self.parsed()
        return [self.argv[0], *without(parsed, self.SESSION_OPTS | {"-p", "--prompt"}), "--resume", session, feedback]

    def finish_round(self, run: Path | None) -> None:
        """A headless Qwen run fires no SessionEnd: close the run's open steps here."""
        if run is None:
            return
        from vacant.attribute.baseline_probe import start as start_probe  # `vacant do` only
        from vacant.record.recorder import Recorder

        call = PLATFORM.parse({"hook_event_name": "SessionEnd", "session_id": run_session(run),
                               "reason": "process exited"}, {"QWEN_PROJECT_DIR": str(self.root)})
        Recorder(self.root, call.session_id, PLATFORM, start_probe=start_probe).handle(call)


Qwen.driver = QwenDriver
PLATFORM = Qwen()
