"""Gemini CLI (@google/gemini-cli 0.61.0): command hooks in `.gemini/settings.json`.

Facts this module relies on, measured on the pinned binary (`gemini --yolo -m gemini-2.5-flash -p
PROMPT`, offline against fixtures/upstreams/fake_gemini.py through GOOGLE_GEMINI_BASE_URL with
GEMINI_API_KEY; captured payloads in fixtures/payloads/gemini/):

- Offline it needs `-m MODEL` (without it the CLI first asks a router model and, given a plain
  answer, hangs), `security.auth.selectedType: "gemini-api-key"` in `~/.gemini/settings.json`, and
  a trusted workspace (`~/.gemini/trustedFolders.json` `{"<ws>": "TRUST_FOLDER"}`): in an
  untrusted folder the approval mode falls back to "default" and the project's hooks are not
  loaded as trusted. `vacant doctor` says so.
- Hooks: `{"hooks": {Event: [{"matcher": "*", "hooks": [{"type": "command", "command",
  "timeout"}]}]}}` in `<project>/.gemini/settings.json` and `~/.gemini/settings.json`;
  $GEMINI_CLI_SYSTEM_SETTINGS_PATH names a system settings file (what `vacant do` uses); Gemini
  skips that file, with a "Security Warning" on stderr only, when any parent directory is writable
  by group or others (sticky /tmp and /var/tmp included), so `vacant do` writes it under vacant's
  data dir and refuses to run when that is not private either.
  `timeout` is in milliseconds (the bundle's DEFAULT_HOOK_TIMEOUT = 6e4). `hooksConfig.enabled:
  false` turns every hook off and `hooksConfig.disabled` lists hook names turned off. It prints
  every project hook command before running ("These hooks will be executed").
- Seen firing headless: SessionStart (`source`), BeforeAgent (`prompt`), PreCompress,
  BeforeModel / BeforeToolSelection / AfterModel (per stream chunk: vacant installs none of
  them), BeforeTool, AfterTool, AfterAgent (`prompt_response`, `stop_hook_active`), SessionEnd
  (`reason: "exit"`, headless too). Hook env: GEMINI_PROJECT_DIR (and CLAUDE_PROJECT_DIR),
  GEMINI_CWD, GEMINI_SESSION_ID. No payload or variable names the model: a tool step takes it
  from the chat file's last model message (`"model": "gemini-2.5-flash"`), written before the
  turn's tools run.
- BeforeTool `{tool_name, tool_input}`, AfterTool adds `tool_response {llmContent,
  returnDisplay}`. Neither carries a tool-call id (the model's id appears only in the next
  request's functionResponse and in the chat file). The step key is therefore the call itself:
  the tool's name and a digest of its input, which Before and After repeat unchanged, plus how
  many identical calls the session's chat file (`transcript_path`) already holds as completed:
  Gemini records a batch's calls (`toolCalls`, with their ids) only once the whole batch is done,
  after every AfterTool of it and before the next model request (chatRecordingService
  recordToolCalls, "before sending responses to Gemini"), so a Before and its After count the
  same, and an identical call made again later (the arm retried after the person's approval) is a
  step of its own. Two identical calls in one batch are one step (the same act twice).
- A failing command gets a normal AfterTool; llmContent is `<untrusted_context>\nOutput: …\nExit
  Code: N\n…` (no "Exit Code" line on success). read_file's llmContent is the file's text.
- BeforeTool `{"decision": "deny", "reason": R}`: the tool does not run, no AfterTool follows,
  the model gets `Tool execution blocked: R`. AfterAgent `{"decision": "deny", "reason": R}`: R
  comes back as the next user message in the same run (BeforeAgent with `prompt: R`), then
  AfterAgent again with `stop_hook_active: true`.

Stdlib only (hot path).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from vacant.core.sha import sha256

from vacant.core.calls import HookCall, Read, Response
from vacant.platforms.base import Diagnosis, advice, diagnosis, edit_intent
from vacant.platforms.dialect import ClaudeDialect, SettingsDriver
from vacant.platforms.driver import DoError, Parsed, parse_args, without

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hook path
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any  # a payload is JSON: each field is read with a check of its type

EVENT_KINDS = {
    "SessionStart": "session_start",
    "BeforeAgent": "prompt",
    "BeforeTool": "tool_pre",
    "AfterTool": "tool_post",
    "AfterAgent": "stop",
    "SessionEnd": "session_end",
}
TOOL_EVENTS = ("BeforeTool", "AfterTool")
TIMEOUTS_MS = {"AfterAgent": 600_000, "SessionStart": 120_000, "BeforeAgent": 30_000}
DEFAULT_TIMEOUT_MS = 60_000
SHELL_TOOL = "run_shell_command"
FILE_TOOLS = ("write_file", "replace")
READ_ONLY_TOOLS = frozenset({"read_file", "read_many_files", "grep_search", "glob", "list_directory", "web_fetch",
                             "google_web_search", "write_todos", "update_topic", "list_background_processes",
                             "read_background_output", "enter_plan_mode", "exit_plan_mode", "activate_skill",
                             "save_memory"})
EXIT_CODE = re.compile(r"^Exit Code: (\d+)", re.MULTILINE)
SYSTEM_SETTINGS_ENV = "GEMINI_CLI_SYSTEM_SETTINGS_PATH"
SYSTEM_SETTINGS = "/etc/gemini-cli/settings.json"  # Linux default
TRUSTED = ("TRUST_FOLDER", "TRUST_PARENT")


def step_key(tool: str, tool_input: object) -> str:
    """The call itself as its key: Gemini's Before/After carry no id but repeat name and input."""
    text = json.dumps([tool, tool_input], sort_keys=True, separators=(",", ":"), default=str)
    return "gemini-" + sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:20]


MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024


def _needles(tool: str, tool_input: object) -> list[bytes]:
    """Byte strings every chat-file line recording this call contains (a cheap filter before
    parsing: a line it lets through wrongly is parsed and compared anyway; one it stops wrongly
    only makes a repeat share its first step's key, for the Before and the After alike)."""
    needles = [json.dumps(tool).encode()]
    if isinstance(tool_input, dict):
        for name in sorted(tool_input, key=str):
            value = tool_input[name]
            if isinstance(value, str) and 0 < len(value) <= 200:
                needles.append(json.dumps(value, ensure_ascii=False)[1:-1].encode("utf-8", "surrogateescape"))
                break
    return needles


def _lines_with(raw: bytes, needle: bytes) -> Iterator[bytes]:
    """Each line of `raw` holding `needle`, found with bytes.find (a long chat file is not split)."""
    at = raw.find(needle)
    while at != -1:
        start = raw.rfind(b"\n", 0, at) + 1
        end = raw.find(b"\n", at)
        end = len(raw) if end == -1 else end
        yield raw[start:end]
        at = raw.find(needle, end)


def read_chat(transcript: object) -> bytes:
    """The session's chat file (empty when it cannot be read, or is past the cap)."""
    from vacant.core.safeio import read_capped

    try:
        return read_capped(str(transcript), MAX_TRANSCRIPT_BYTES) if isinstance(transcript, str) else b""
    except (OSError, ValueError):
        return b""


MODEL_FIELD = re.compile(rb'"type":"gemini"[^\n]*?"model":"([^"\\]{1,200})"')


def last_model(raw: bytes) -> str | None:
    """The model of the chat file's last model message (Gemini writes it before the turn's tools run)."""
    start = raw.rfind(b'"type":"gemini"')
    match = MODEL_FIELD.match(raw, start) if start != -1 else None
    return match.group(1).decode("utf-8", "replace") if match else None


def completed_before(raw: bytes, tool: str, tool_input: object) -> int:
    """How many calls like this one the chat file records as completed (distinct call ids); 0
    when it cannot be read (a Before and its After then still agree)."""
    key = step_key(tool, tool_input)
    needles = [b'"toolCalls"', *_needles(tool, tool_input)]
    ids, seen = set(), set()
    for line in _lines_with(raw, needles[-1]):
        if not all(needle in line for needle in needles) or line in seen:
            continue
        seen.add(line)  # Gemini rewrites a message line whole: parse each text once
        try:
            message = json.loads(line)
        except ValueError:
            continue
        calls = message.get("toolCalls") if isinstance(message, dict) else None
        for call in calls if isinstance(calls, list) else ():
            if isinstance(call, dict) and step_key(str(call.get("name", "")), call.get("args")) == key:
                ids.add(str(call.get("id")))
    return len(ids)


def _scope(tool: str, data: dict[str, Any]) -> list[str] | None:
    if tool in FILE_TOOLS:
        path = data.get("file_path")
        return [path] if isinstance(path, str) else None
    if tool in READ_ONLY_TOOLS:
        return []
    return None  # the shell, a sub-agent and unknown tools may touch anything


def _llm_text(response: object) -> str | None:
    if isinstance(response, dict) and isinstance(response.get("llmContent"), str):
        return str(response["llmContent"])
    if isinstance(response, str):
        return response
    return None


def _reads(tool: str, data: dict[str, Any], text: str | None) -> list[Read]:
    if tool == "read_file":
        whole = all(data.get(k) is None for k in ("offset", "limit", "start_line", "end_line"))
        # a part of the file: the recorder takes its bytes from the recorded state instead
        return [Read("file", str(data.get("file_path", "")), text if whole else None)]
    if tool in ("grep_search", "glob", "list_directory"):
        return [Read("search", str(data.get("pattern") or data.get("dir_path") or data.get("path") or ""), text or "")]
    if tool == SHELL_TOOL:
        return [Read("command", str(data.get("command", "")), text or "")]
    if tool == "web_fetch":
        return [Read("url", str(data.get("url") or data.get("prompt") or ""), text or "")]
    if tool == "google_web_search":
        return [Read("url", "search:" + str(data.get("query", "")), text or "")]
    if tool == "invoke_agent":
        return [Read("subagent", str(data.get("agent_name") or data.get("name") or "agent"), text or "")]
    return []


class Gemini(ClaudeDialect):
    name = "gemini"
    display = "Gemini CLI"
    cell_platform = "gemini-cli"
    aliases = ("gemini-cli",)
    program = "gemini"
    provider = "gcp.gemini"
    events = EVENT_KINDS
    hook_env = ("GEMINI",)  # GEMINI_PROJECT_DIR, GEMINI_CWD, GEMINI_SESSION_ID (and CLAUDE_PROJECT_DIR)
    project_dir_env = ('GEMINI_PROJECT_DIR', 'CLAUDE_PROJECT_DIR')
    session_env = "GEMINI_SESSION_ID"
    settings_in_workspace = (".gemini/settings.json",)
    settings_in_home = (".gemini/settings.json",)
    workspace_file = home_file = ".gemini/settings.json"
    scopes = ("project", "user")  # `local` is the project's .gemini/settings.json: Gemini has no local file
    matcher_events = TOOL_EVENTS
    timeouts = TIMEOUTS_MS
    default_timeout = DEFAULT_TIMEOUT_MS
    timeout_unit = "milliseconds"
    system_settings_env = SYSTEM_SETTINGS_ENV
    system_settings = SYSTEM_SETTINGS

    def headless(self, binary: str, prompt: str, model: str | None, extra: list[str]) -> list[str]:
        # -m always: without it the CLI asks a router model first (measured: it can hang there)
        return [binary, "--yolo", "--output-format", "json", "-m", model or "gemini-2.5-flash", *extra, "-p", prompt]

    # -- payloads ----------------------------------------------------------------------------

    def parse_tool(self, call: HookCall, payload: dict[str, Any], env: dict[str, str]) -> None:
        call.tool = str(payload.get("tool_name", ""))
        call.tool_input = payload.get("tool_input")
        data = call.tool_input if isinstance(call.tool_input, dict) else {}
        key = step_key(call.tool, call.tool_input)
        chat = read_chat(payload.get("transcript_path"))
        done = completed_before(chat, call.tool, call.tool_input)
        call.key = f"{key}.{done}" if done else key
        call.model = last_model(chat)  # no payload or variable names it (measured)
        call.scope = _scope(call.tool, data)
        call.cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
        call.tool_kind, call.intent = self.intent(call.tool, call.tool_input)
        if call.kind != "tool_post":
            return
        text = _llm_text(payload.get("tool_response"))
        call.outcome = "ok"
        if call.tool == SHELL_TOOL:
            match = EXIT_CODE.search(text or "")
            call.exit_code = int(match.group(1)) if match else 0
            call.outcome = "ok" if call.exit_code == 0 else "failed"
        elif isinstance(payload.get("tool_response"), dict) and payload["tool_response"].get("error"):
            call.outcome = "failed"
        call.reads = _reads(call.tool, data, text)

    @staticmethod
    def intent(tool: str, tool_input: object) -> tuple[str | None, dict[str, Any]]:
        """Gemini's tools as the core's tool kinds (vacant/core/calls.py TOOL_KINDS)."""
        data = tool_input if isinstance(tool_input, dict) else {}
        if tool == SHELL_TOOL:
            return "shell", {"command": data.get("command")}
        if tool == "write_file":
            return "write", {"path": data.get("file_path"), "content": data.get("content")}
        if tool == "replace":
            many = isinstance(data.get("expected_replacements"), int) and data["expected_replacements"] > 1
            return "edit", edit_intent(data.get("file_path"), data.get("old_string"), data.get("new_string"), many)
        if tool == "read_file":
            return "read", {"path": data.get("file_path")}
        if tool in ("grep_search", "glob", "list_directory"):
            return "read", {"path": data.get("dir_path") or data.get("path")}
        return None, {}

    # -- responses ---------------------------------------------------------------------------

    def render(self, call: HookCall, response: Response) -> tuple[str, int]:
        """BeforeTool and AfterAgent both read `{"decision": "deny", "reason"}` (measured)."""
        out: dict[str, object] = {}
        if (response.action == "deny" and call.kind == "tool_pre") or (
                response.action == "block" and call.kind in ("stop", "subagent_stop")):
            out = {"decision": "deny", "reason": response.reason}
        if response.system_message:
            out["systemMessage"] = response.system_message
        return (json.dumps(out) if out else ""), 0

    # -- doctor ------------------------------------------------------------------------------

    def switches(self, path: Path, settings: dict[str, object], ours: int) -> list[Diagnosis]:
        return _switches(path, settings)

    def advice_lines(self, root: Path, installed_in: list[str]) -> list[Diagnosis]:
        report = []
        if "project" in installed_in and not trusted(root):
            report.append(advice("trusted folder", f"{root} is not a trusted folder in ~/.gemini/trustedFolders.json: "
                                 "Gemini CLI does not run an untrusted project's hooks as trusted (and drops --yolo); "
                                 "trust it in Gemini CLI (/permissions) or install with --scope user"))
        report.append(advice("model", "headless, pass -m MODEL: without it Gemini CLI asks a router model first"))
        return report


def trusted(root: Path, home: Path | None = None) -> bool | None:
    """Whether ~/.gemini/trustedFolders.json trusts the workspace (None: no such file)."""
    path = (home or Path.home()) / ".gemini" / "trustedFolders.json"
    try:
        folders = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return False
    if not isinstance(folders, dict):
        return False
    root = Path(root).resolve()
    for folder, level in folders.items():
        # TRUST_PARENT on a folder trusts its parent; either trust covers every folder below
        trusted_dir = Path(str(folder)).expanduser()
        trusted_dir = trusted_dir.parent if level == "TRUST_PARENT" else trusted_dir
        if level in TRUSTED and (root == trusted_dir or trusted_dir in root.parents):
            return True
    return False


def _switches(path: Path, settings: dict[str, object]) -> list[Diagnosis]:
    from vacant.platforms.settings_file import MARK  # doctor time only

    config = settings.get("hooksConfig")
    if not isinstance(config, dict):
        return []
    found = []
    if config.get("enabled") is False:
        found.append(diagnosis(f"{path} hooksConfig.enabled", False, "hooksConfig.enabled is false: no hook runs"))
    disabled = config.get("disabled")
    if isinstance(disabled, list) and any(MARK in str(name) for name in disabled):
        found.append(diagnosis(f"{path} hooksConfig.disabled", False, "hooksConfig.disabled turns vacant's hook off"))
    return found


# -- `vacant do` ----------------------------------------------------------------------------------


class GeminiDriver(SettingsDriver):
    """vacant's hooks through a system settings file of the run's own ($GEMINI_CLI_SYSTEM_SETTINGS_PATH:
    the person's system settings merged with the hooks), never a settings file of theirs."""

    platform = "gemini"
    facts = Gemini
    can_continue = True
    VALUE = {"-m", "--model", "-p", "--prompt", "-i", "--prompt-interactive", "--approval-mode", "-o",
             "--output-format", "-r", "--resume", "--session-id", "--proxy", "--sandbox-image",
             "--telemetry-target", "--telemetry-otlp-endpoint", "--telemetry-outfile", "-w", "--worktree"}
    VARIADIC = {"--allowed-tools", "--allowed-mcp-server-names", "-e", "--extensions", "--include-directories",
                "--policy", "--admin-policy"}
    SESSION_OPTS = {"-r", "--resume", "--session-id"}

    def parsed(self) -> Parsed:
        return parse_args(self.argv[1:], self.VALUE, self.VARIADIC)

    def prepare(self) -> None:
        # a directory only this user may write to: Gemini CLI skips the file otherwise (measured)
        self.settings = self.write_settings(_private_dir(self.tmp) / f"gemini-system-settings-{os.getpid()}-{id(self):x}.json")
        self.session = self.parsed().value("-r", "--resume", "--session-id")

    def close(self) -> None:
        settings = getattr(self, "settings", None)  # set by prepare, which may not have run
        if settings is not None:
            settings.unlink(missing_ok=True)

    def resume(self, session: str, feedback: str) -> list[str]:
        parsed = self.parsed()
        return [self.argv[0], *without(parsed, self.SESSION_OPTS | {"-p", "--prompt", "-i", "--prompt-interactive"}),
                "--resume", session, "-p", feedback]


def _insecure(path: Path) -> Path | None:
    """The first of `path` and its parents that group or others may write to (None: none)."""
    for folder in (path, *path.parents):
        try:
            if folder.stat().st_mode & 0o022:
                return folder
        except OSError:
            return folder
    return None


def _private_dir(tmp: Path) -> Path:
    """Where Gemini CLI accepts a system settings file: it skips one with any parent writable by
    group or others (measured: "Parent directory '/var/tmp' is insecure"), sticky /tmp included."""
    from vacant.core.locations import user_data_dir  # `vacant do` only

    refused = []
    for folder in (user_data_dir() / "do", tmp):
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        bad = _insecure(folder.resolve())
        if bad is None:
            return folder
        refused.append(f"{folder} ({bad} is writable by others)")
    raise DoError("Gemini CLI skips a system settings file under a directory others may write to: "
                  + "; ".join(refused) + "; set VACANT_HOME to a private directory")


Gemini.driver = GeminiDriver
PLATFORM = Gemini()
