"""Claude Code (2.1.x): hook payloads in, decisions out, hooks installed in settings JSON.

Facts this module relies on (measured on the real CLI; captured payloads under fixtures/payloads/):
paths come from $CLAUDE_PROJECT_DIR (the payload's cwd follows `cd`); failing Bash gets
PostToolUseFailure with "Exit code N" in `error`; denied or invalid calls get no Post and show up
only in PostToolBatch; the model id is in no payload, only in the transcript and in the Agent
tool's `resolvedModel`. Stdlib only (hot path).
"""

from __future__ import annotations

from vacant.core import leanjson as json  # json without `import json` (hot path)
import os
from pathlib import Path

from vacant.core.calls import BatchCall, HookCall, Read
from vacant.platforms.base import Diagnosis, advice, edit_intent
from vacant.platforms.dialect import ClaudeDialect
from vacant.platforms.driver import DoError, Driver, Parsed, parse_args, without

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hook path
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any  # a payload is JSON: each field is read with a check of its type

    from vacant.core.wall import Wall

# Tools that write nothing in the workspace (no scan around them).
READ_ONLY_TOOLS = frozenset(
    {
        "Read", "Grep", "Glob", "LS", "WebFetch", "WebSearch", "TodoWrite", "TodoRead",
        "Agent", "Task", "TaskCreate", "TaskUpdate", "TaskGet", "TaskList", "TaskOutput",
        "BashOutput", "ExitPlanMode", "AskUserQuestion", "ToolSearch", "ListMcpResourcesTool",
        "ReadMcpResourceTool",
    }
)
FILE_TOOLS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}

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
# Seconds. SessionEnd keeps Claude's own 1.5 s budget: the recorder must fit inside it.
TIMEOUTS = {"Stop": 600, "SubagentStop": 600, "SessionStart": 120, "UserPromptSubmit": 30}
DEFAULT_TIMEOUT = 60
HOOK_TYPES = ("command", "prompt", "agent", "http", "mcp_tool")
TRANSCRIPT_TAIL = 256 * 1024
CATCH_UP_S = 3.0  # how long a Stop waits for the transcript to hold its last message before naming a call


def _scope(tool: str, tool_input: Any) -> list[str] | None:
    if tool in FILE_TOOLS:
        path = (tool_input or {}).get(FILE_TOOLS[tool])
        return [path] if isinstance(path, str) else None
    if tool in READ_ONLY_TOOLS:
        return []
    return None  # Bash and unknown tools may touch anything


def _text(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for name in ("result", "content", "output", "text"):
            if isinstance(value.get(name), str):
                return str(value[name])
    return json.dumps(value, sort_keys=True)


def _reads(tool: str, tool_input: Any, response: object) -> list[Read]:
    tool_input = tool_input or {}
    if tool == "Read" and isinstance(response, dict):
        file = response.get("file") or {}
        content = file.get("content")
        # not text (an image, a notebook): the recorder takes the file from the recorded state
        return [Read("file", str(tool_input.get("file_path", "")), content if isinstance(content, str) else None)]
    if tool in ("Grep", "Glob"):
        return [Read("search", str(tool_input.get("pattern", "")), _text(response))]
    if tool == "Bash" and isinstance(response, dict):
        output = str(response.get("stdout", "")) + str(response.get("stderr", ""))
        return [Read("command", str(tool_input.get("command", "")), output)]
    if tool == "WebFetch":
        return [Read("url", str(tool_input.get("url", "")), _text(response))]
    if tool == "WebSearch":
        return [Read("url", "search:" + str(tool_input.get("query", "")), _text(response))]
    if tool in ("Agent", "Task") and isinstance(response, dict):
        blocks = response.get("content") or []
        reply = "\n".join(b.get("text", "") for b in blocks if isinstance(b, dict))
        return [Read("subagent", str(response.get("agentId") or tool_input.get("subagent_type", "")), reply)]
    return []


def _final_text(payload: dict[str, object]) -> str | None:
    """The agent's last message (Stop, SubagentStop), when the payload gives one."""
    message = payload.get("last_assistant_message")
    return message if isinstance(message, str) and message.strip() else None


MODEL_TAG_PATTERN = r"\[[^\]]*\]$"  # the tag `model_id` removes, as a regex (its definition)


def model_id(name: str) -> str:
    """The API model id: Claude decorates some names with a context-size tag (`…[1m]`).
    `re.sub(MODEL_TAG_PATTERN, "", name)` without `re` (every call names its model; `re` costs a
    call about 4 ms): the tag ends the name (or comes just before a final newline, as `$` reads)
    and starts at the first `[` after the last `]` before its own."""
    end = len(name) - 1 if name.endswith("]") else len(name) - 2 if name.endswith("]\n") else -1
    if end < 0:
        return name
    start = name.find("[", name.rfind("]", 0, end) + 1, end)
    return name if start < 0 else name[:start] + name[end + 1:]


def transcript_model(path: str | None) -> str | None:
    """The model of the last assistant line of a transcript (it lags the hooks: may be None)."""
    if not path or not isinstance(path, str):
        return None  # an int would open (and close) that file descriptor
    import stat

    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None  # a FIFO or device would block or never end
        with open(path, "rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(max(0, size - TRANSCRIPT_TAIL))
            tail = handle.read()
    except (OSError, ValueError):  # ValueError: a NUL in the path
        return None
    for raw in reversed(tail.split(b"\n")):
        if b'"assistant"' not in raw:
            continue
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        model = (line.get("message") or {}).get("model") if line.get("type") == "assistant" else None
        if model and not model.startswith("<"):
            return model_id(model)
    return None


STOP_WAIT_S = 0.5  # how long a Stop waits for a transcript's first model line (it is usually there already)


def transcript_model_at_stop(path: str | None) -> str | None:
    """transcript_model at a Stop or SubagentStop, which waits up to STOP_WAIT_S for an assistant
    line while Claude flushes the transcript: a sub-agent's first Stop found none (seen: 2 runs in
    8 of the e2e test on a loaded machine), so its finding's review went to a cell of model
    `unknown`. No wait where the transcript does not exist; a Stop runs the checks anyway."""
    model = transcript_model(path)
    if model is not None or not isinstance(path, str) or not os.path.isfile(path):
        return model
    import time

    deadline = time.monotonic() + STOP_WAIT_S
    while model is None and time.monotonic() < deadline:
        time.sleep(0.01)
        model = transcript_model(path)
    return model


def subagent_transcript(transcript_path: str | None, agent_id: str) -> str | None:
    if not isinstance(transcript_path, str) or not transcript_path.endswith(".jsonl"):
        return None
    return f"{transcript_path[:-6]}/subagents/agent-{agent_id}.jsonl"


def sandbox_readonly(wall: Wall, root: Path | None) -> list[str]:
    """The paths Claude's sandbox holds read-only. A path missing inside the workspace is left out:
    the sandbox would make its first missing directory a read-only mount (measured on 2.1.197: a
    missing `.github/hooks/vacant.json` made `.github` one, and `mkdir -p .github/workflows`
    failed), so the seal watches it instead (a settings file that appears stops the next tool call:
    vacant/core/seal.py). `.claude` itself cannot be held (measured: the sandbox then fails every
    command making its own `.claude/commands` placeholder inside it); the seal names its rename."""
    readonly = list(wall.readonly)
    if root is None:
        return readonly
    from vacant.core.wall import inside

    base = os.path.realpath(root)
    return [path for path in readonly if os.path.lexists(path) or not inside(path, base)]


def network_policy_of_the_person(root: Path) -> str | None:
    """The first of the person's Claude settings (managed, user, project, local) that already says
    where the sandbox's network may go (`sandbox.network.allowedDomains` or `deniedDomains`, other
    than the `*` vacant writes), or None. Claude merges these lists across scopes, so vacant's `*`
    would undo such a policy: then vacant adds nothing and the person's policy decides."""
    candidates = (Path("/etc/claude-code/managed-settings.json"), Path.home() / ".claude" / "settings.json",
                  root / ".claude" / "settings.json", root / ".claude" / "settings.local.json")
    for path in candidates:
        try:
            settings = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        sandbox = settings.get("sandbox") if isinstance(settings, dict) else None
        network = sandbox.get("network") if isinstance(sandbox, dict) else None
        if not isinstance(network, dict):
            continue
        named = [entry for key in ("allowedDomains", "deniedDomains")
                 for entry in (network[key] if isinstance(network.get(key), list) else []) if entry != "*"]
        if named:
            return str(path)
    return None


class Claude(ClaudeDialect):
    """The dialect's own platform: what it adds is http hooks to the workspace's daemon, Claude's
    sandbox as the wall, and transcript checks."""

    name = "claude"
    display = "Claude"
    unreadable = "ignores every hook in it"
    cell_platform = "claude-code"
    aliases = ("claude-code",)
    program = "claude"
    provider = "anthropic"
    events = EVENT_KINDS
    hook_env = ("CLAUDE",)  # CLAUDE_PROJECT_DIR, CLAUDE_CODE_SESSION_ID
    project_dir_env = ('CLAUDE_PROJECT_DIR',)
    settings_in_workspace = (".claude/settings.json", ".claude/settings.local.json")
    settings_in_home = (".claude/settings.json",)
    workspace_file = home_file = ".claude/settings.json"
    local_file = ".claude/settings.local.json"
    matcher_events = TOOL_EVENTS
    timeouts = TIMEOUTS
    default_timeout = DEFAULT_TIMEOUT
    hook_types = HOOK_TYPES
    http_hooks = True  # see HTTP_EVENTS
    sandbox_needs_every_package = True  # its sandbox runs commands through bubblewrap and socat
    own_sandbox = "Claude Code's sandbox (bubblewrap), in `.claude/settings.local.json`"
    # Measured on the pinned 2.1.197: while a sandboxed command runs, each of these missing from the
    # workspace is a /dev/null bind (a character device: `git add -A` fails on it); a real directory
    # made later under a name in the second list is still seen by git (vacant/platforms/git_exclude.py)
    sandbox_placeholders = (".gitconfig", ".gitmodules", ".bashrc", ".bash_profile", ".zshrc", ".zprofile", ".profile",
                            ".ripgreprc", ".mcp.json", ".vscode", ".idea", ".claude/settings.json",
                            ".claude/settings.local.json", ".claude/launch.json", ".claude/scheduled_tasks.json",
                            ".claude/agents", ".claude/commands", ".claude/hooks", ".claude/routines", ".claude/skills",
                            ".claude/workflows")
    sandbox_placeholder_dirs = (".vscode", ".idea", ".claude/agents", ".claude/commands", ".claude/hooks",
                                ".claude/routines", ".claude/skills", ".claude/workflows")

    def headless(self, binary: str, prompt: str, model: str | None, extra: list[str]) -> list[str]:
        return [binary, "-p", prompt, "--permission-mode", "acceptEdits", "--allowedTools", "Bash",
                "--output-format", "json", *(["--model", model] if model else []), *extra]

    # -- payloads ----------------------------------------------------------------------------

    def parse(self, payload: dict[str, Any], env: dict[str, str]) -> HookCall:
        event = payload.get("hook_event_name", "")
        root = self.project_dir(env) or payload.get("cwd") or "."
        call = HookCall(
            kind=EVENT_KINDS.get(event, "ignore"),
            session_id=str(payload.get("session_id") or env.get("CLAUDE_CODE_SESSION_ID") or "unknown"),
            workspace=Path(root),
            agent_id=payload.get("agent_id"),
            agent_type=payload.get("agent_type"),
            transcript_path=payload.get("transcript_path"),
            source=payload.get("source"),
            stop_hook_active=bool(payload.get("stop_hook_active")),
            reason=payload.get("reason"),
            final_text=_final_text(payload),
        )
        getattr(self, "_parse_" + call.kind)(call, payload)
        return call

    def _parse_ignore(self, call: HookCall, payload: dict[str, Any]) -> None:
        pass

    _parse_session_start = _parse_session_end = _parse_subagent_start = _parse_ignore

    def _parse_prompt(self, call: HookCall, payload: dict[str, Any]) -> None:
        call.reads = [Read("prompt", "user", str(payload.get("prompt", "")))]

    def _parse_tool_pre(self, call: HookCall, payload: dict[str, Any]) -> None:
        call.tool = str(payload.get("tool_name", ""))
        call.tool_input = payload.get("tool_input")
        call.key = str(payload.get("tool_use_id", ""))
        call.scope = _scope(call.tool, call.tool_input)
        call.cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
        call.tool_kind, call.intent = self.intent(call.tool, call.tool_input)
        self._resolve_model(call)

    @staticmethod
    def intent(tool: str, tool_input: object) -> tuple[str | None, dict[str, Any]]:
        """Claude's tools as the core's tool kinds (vacant/core/calls.py TOOL_KINDS)."""
        data = tool_input if isinstance(tool_input, dict) else {}
        if tool == "Bash":  # `background`: the command went on running after the call returned
            return "shell", {"command": data.get("command"), **({"background": True} if data.get("run_in_background") else {})}
        if tool == "Write":
            return "write", {"path": data.get("file_path"), "content": data.get("content")}
        if tool == "Edit":
            return "edit", edit_intent(data.get("file_path"), data.get("old_string"), data.get("new_string"),
                                       data.get("replace_all"))
        if tool == "MultiEdit":
            return "edit", {"path": data.get("file_path"), "edits": data.get("edits") or []}
        if tool == "NotebookEdit":
            return "notebook", {"path": data.get("notebook_path")}
        if tool == "Read":
            return "read", {"path": data.get("file_path")}
        if tool in ("Grep", "Glob", "LS"):
            return "read", {"path": data.get("path")}
        return None, {}

    def _parse_tool_post(self, call: HookCall, payload: dict[str, Any]) -> None:
        self._parse_tool_pre(call, payload)
        response = payload.get("tool_response")
        if payload.get("hook_event_name") == "PostToolUseFailure":
            error = str(payload.get("error", ""))
            call.outcome = "failed"
            import re  # a failed call's only

            match = re.match(r"Exit code (\d+)", error)
            call.exit_code = int(match.group(1)) if match else None
            if call.tool == "Bash":
                command = call.tool_input.get("command", "") if isinstance(call.tool_input, dict) else ""
                call.reads = [Read("command", str(command), error)]
            return
        call.outcome = "ok"
        call.exit_code = 0 if call.tool == "Bash" else None
        call.reads = _reads(str(call.tool), call.tool_input, response)
        if call.tool in ("Agent", "Task") and isinstance(response, dict):
            if response.get("agentId") and response.get("resolvedModel"):
                call.models[str(response["agentId"])] = model_id(str(response["resolvedModel"]))

    def _parse_tool_batch(self, call: HookCall, payload: dict[str, Any]) -> None:
        for item in payload.get("tool_calls") or []:
            call.batch.append(
                BatchCall(
                    key=str(item.get("tool_use_id", "")),
                    tool=str(item.get("tool_name", "")),
                    tool_input=item.get("tool_input"),
                    response_text=_text(item.get("tool_response", "")),
                )
            )

    def _parse_subagent_stop(self, call: HookCall, payload: dict[str, Any]) -> None:
        message = payload.get("last_assistant_message")
        if isinstance(message, str):
            call.reads = [Read("subagent", str(call.agent_id), message)]
        call.model = transcript_model_at_stop(payload.get("agent_transcript_path"))

    def _parse_stop(self, call: HookCall, payload: dict[str, Any]) -> None:
        self._resolve_model(call, transcript_model_at_stop)

    def _resolve_model(self, call: HookCall, read: Callable[[str | None], str | None] = transcript_model) -> None:
        if call.agent_id:
            call.model = read(subagent_transcript(call.transcript_path, call.agent_id))
        else:
            call.model = read(call.transcript_path)

    def unhooked(self, call: HookCall, known: set[str]) -> list[tuple[BatchCall, str]]:
        """Tool calls of this agent that reached no hook (see claude_transcript)."""
        from vacant.platforms import claude_transcript  # read back at Stop only

        path = subagent_transcript(call.transcript_path, call.agent_id) if call.agent_id else call.transcript_path
        return claude_transcript.unhooked(path, known)

    def unheard(self, call: HookCall, agent_id: str | None, recorded: dict[str, str]) -> list[tuple[str, str]] | None:
        """An agent's recorded calls its transcript does not back (see claude_transcript): the main
        agent's is the session's, a sub-agent's its own file beside it (`subagents/agent-<id>.jsonl`).
        A sub-agent the session never spawned has no file: every call recorded for it is unheard,
        once the session's own transcript can judge at all.
        The transcript lags the hooks (once under load, a turn's last `tool_use` line was not in it
        when the Stop hook ran), so before naming a call, the transcript of the agent whose Stop this
        is must hold the last message the Stop payload gives, within CATCH_UP_S; one that never
        does cannot judge (None): never an accusation from a view that has not caught up."""
        from vacant.platforms import claude_transcript  # read back at Stop only

        found = self._unbacked(call, agent_id, recorded)
        own = subagent_transcript(call.transcript_path, call.agent_id) if call.agent_id else call.transcript_path
        if not found or not call.final_text or not own or not os.path.isfile(own):
            return found  # nothing to name, or it cannot judge at all (None): no wait
        if not claude_transcript.caught_up(own, call.final_text, CATCH_UP_S):
            return None
        return self._unbacked(call, agent_id, recorded)

    def _unbacked(self, call: HookCall, agent_id: str | None, recorded: dict[str, str]) -> list[tuple[str, str]] | None:
        from vacant.platforms import claude_transcript

        if agent_id is None:
            return claude_transcript.unheard(call.transcript_path, recorded)
        path = subagent_transcript(call.transcript_path, agent_id)
        if path is not None and os.path.isfile(path):
            return claude_transcript.unheard(path, recorded)
        if claude_transcript.unheard(call.transcript_path, {}) is None:
            return None
        return [(key, "call-unheard") for key in recorded]

    # -- responses ---------------------------------------------------------------------------

    # -- installation ------------------------------------------------------------------------

    scopes = ("local", "project", "user")

    def hook_handler(self, event: str, command: str) -> dict[str, object]:
        handler = super().hook_handler(event, command)
        if event == "SessionEnd":
            del handler["timeout"]  # Claude's own 1.5 s budget: the recorder must fit inside it
        return handler

    def hooks_block(self, hook_command: str, http: dict[str, str] | None = None) -> dict[str, list[dict[str, Any]]]:
        """Command hooks for every event; with `http` ({"url", "token"}: the workspace daemon's
        listener), `http` hooks for the events that decide nothing (see HTTP_EVENTS)."""
        block = super().hooks_block(hook_command)
        if not http:
            return block
        for event in HTTP_EVENTS:
            block[event] = [{**group, "hooks": [_http_handler(http, event)]} for group in block[event]]
        # PreToolUse: fail closed where the gate may hold the call, http where it never does
        block["PreToolUse"] = [{"matcher": HELD_MATCHER, "hooks": [self.hook_handler("PreToolUse", hook_command)]},
                               {"matcher": FREE_MATCHER, "hooks": [_http_handler(http, "PreToolUse")]}]
        return block

    def install(self, root: Path, scope: str, hook_command: str, http: dict[str, str] | None = None,
                wall: Wall | None = None) -> Path:
        """The hooks into the scope's settings; with `wall` (vacant/core/wall.py), Claude's own
        sandbox around every Bash command (`sandbox_settings`), always in the workspace's local
        settings: its paths are this machine's and this workspace's."""
        from vacant.platforms import (
            settings_file,  # install-time only: off the hot path
        )

        path = self.settings_path(root, scope)
        local = self.settings_path(root, "local")
        overlay = self.sandbox_settings(wall, root) if wall is not None else None
        unseen = self.unseen_by_git(root, wall is not None, keep=path) if path == local or overlay else None
        # the daemon's secret is written only into the local (uncommitted, per-workspace) settings
        settings_file.install(path, self.hooks_block(hook_command, http if scope == "local" else None),
                              self.validate_settings, overlay if path == local else None)
        if path != local and overlay is not None:  # unwalled, another scope's install leaves local alone
            settings_file.install(local, {}, self.validate_settings, overlay)
        if (http and scope == "local") or (overlay and local.exists()):
            local.chmod(0o600)  # it holds the daemon's secret, and the wall's paths
        if unseen is not None:
            from vacant.platforms import git_exclude

            git_exclude.install(root, self.name, *unseen)
        return path

    def unseen_by_git(self, root: Path, walled: bool, keep: Path) -> tuple[list[str], list[str]]:
        """The `.git/info/exclude` lines of an install (read before it writes anything): the local
        settings file (this machine's paths, the daemon's secret: never committed by a `git add -A`)
        and, walled, the sandbox's placeholders for the protected paths missing now, but `keep` (the
        project's shared settings an install writes for the person to commit)."""
        from vacant.platforms import git_exclude

        local = f"/{self.settings_path(Path(), 'local').as_posix()}"
        kept = f"/{self.settings_path(Path(), 'project').as_posix()}" if keep == self.settings_path(root, "project") else None
        placeholders = git_exclude.lines_for(root, self.sandbox_placeholders, self.sandbox_placeholder_dirs) if walled else []
        return [local], [line for line in placeholders if line not in (local, kept)]

    def uninstall(self, root: Path, scope: str) -> Path | None:
        from vacant.platforms import git_exclude, settings_file

        path = self.settings_path(root, scope)
        excluded = git_exclude.uninstall(root, self.name) if scope == "local" else None
        return path if settings_file.uninstall(path) or excluded else None

    def wall_problem(self, root: Path, wall: Wall) -> str | None:
        """What is missing of the wall in the workspace's local settings (doctor), or None."""
        path = self.settings_path(root, "local")
        try:
            settings = json.loads(path.read_text())
        except (OSError, ValueError):
            return f"{path} is missing or unreadable: the wall is down; run `vacant init --platform claude` again"
        sandbox = settings.get("sandbox") if isinstance(settings.get("sandbox"), dict) else {}
        for key, want in (("enabled", True), ("failIfUnavailable", True), ("allowUnsandboxedCommands", False)):
            if sandbox.get(key) is not want:
                return f"{path}: sandbox.{key} is not {str(want).lower()}: the wall is down"
        denied = set((sandbox.get("filesystem") or {}).get("denyRead") or [])
        missing = [p for p in wall.hidden if p not in denied]
        if missing:
            return f"{path}: sandbox.filesystem.denyRead lacks {missing[0]}: run `vacant init --platform claude` again"
        from vacant.core.wall import sandbox_tmpdir_too_long

        if sandbox_tmpdir_too_long():
            return (f"TMPDIR ({os.environ.get('TMPDIR')}) is too long for the unix sockets of Claude's sandbox: it "
                    "cannot start, so every Bash call fails; run claude with a shorter TMPDIR (e.g. TMPDIR=/tmp)")
        return None

    @staticmethod
    def sandbox_settings(wall: Wall, root: Path | None = None) -> dict[str, object]:
        """Claude Code's sandbox (bubblewrap on Linux) as a settings overlay: on, failing when it
        is unavailable, no unsandboxed retries, the wall's hidden paths unreadable and every
        protected path unwritable, for each program Bash runs (Read/Edit deny rules are merged into
        the same sandbox, and also stop Claude's own file tools). Measured on the pinned 2.1.197
        (fixtures/payloads/sandbox-notes.md): a denied directory becomes a tmpfs, a denied file a
        /dev/null bind; a path missing at wrap time is not hidden. A push runs outside it
        (`excludedCommands`: vacant/core/wall.py UNWALLED_COMMANDS), only once the person approved
        the line: the gate holds every line naming one. With `root`, the network the gate lets a
        READ reach: every host through the sandbox's proxy (`allowedDomains: ["*"]`; measured: a
        host the list lacks gets the proxy's 403), unless the person's own settings already say
        where it may go (`network_policy_of_the_person`). The sandbox's own network namespace still
        keeps a direct connection to this machine's loopback (`curl localhost:PORT`) out. With
        `root`, the sandbox's read-only list is `sandbox_readonly`'s."""
        from os.path import isdir

        from vacant.core.wall import UNWALLED_COMMANDS

        def rule(verb: str, path: str) -> str:
            return f"{verb}(/{path}/**)" if isdir(path) else f"{verb}(/{path})"

        readonly = sandbox_readonly(wall, root)  # Edit rules become sandbox paths too: the same list
        network = {} if root is None or network_policy_of_the_person(root) else {"sandbox.network.allowedDomains": ["*"]}
        return {
            **network,
            "sandbox.enabled": True,
            "sandbox.failIfUnavailable": True,
            "sandbox.allowUnsandboxedCommands": False,
            "sandbox.excludedCommands": [form for unwalled in UNWALLED_COMMANDS for form in (unwalled, f"{unwalled}:*")],  # the gate holds them for the person
            "sandbox.filesystem.denyRead": list(wall.hidden),
            "sandbox.filesystem.denyWrite": [*wall.hidden, *readonly],
            "permissions.deny": [*(rule("Read", p) for p in wall.hidden),
                                 *(rule("Edit", p) for p in (*wall.hidden, *readonly))],
        }

    # -- the settings' schema, and doctor ------------------------------------------------------

    def handler_problems(self, where: str, handler: object) -> list[str]:
        if not isinstance(handler, dict):
            return [f"{where} must be an object"]
        problems = []
        if handler.get("type") not in HOOK_TYPES:
            problems.append(f"{where}.type is {handler.get('type')!r}; allowed: {', '.join(HOOK_TYPES)}")
        if handler.get("type") == "http" and not str(handler.get("url", "")).startswith(("http://", "https://")):
            problems.append(f"{where}.url must be an http(s) URL (Claude does not interpolate it)")
        if handler.get("type") == "command" and not isinstance(handler.get("command"), str) and not handler.get("args"):
            problems.append(f"{where}.command must be a string")
        timeout = handler.get("timeout")
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0):
            problems.append(f"{where}.timeout must be a positive number of seconds")
        return problems

    def switches(self, path: Path, settings: dict[str, object], ours: int) -> list[Diagnosis]:
        found = super().switches(path, settings, ours)
        permissions = settings.get("permissions")
        mode = permissions.get("defaultMode") if isinstance(permissions, dict) else None
        if ours and mode in (None, "default"):
            found.append(advice(
                "permission mode",
                f"{path.name}: default mode in `claude -p` denies Write/Edit/Bash and PostToolUse never fires; "
                "run with --permission-mode acceptEdits --allowedTools Bash"))
        return found

    def advice_lines(self, root: Path, installed_in: list[str]) -> list[Diagnosis]:
        return [advice("--bare", "never run claude with --bare or --safe-mode: both skip every hook")]


# Measured on the pinned 2.1.197 (`claude -p`, the scripted upstream): an http hook POSTs the same
# JSON a command hook reads on stdin; header values take $VAR / ${VAR} for variables listed in
# `allowedEnvVars`, from Claude's own environment or the settings' `env` block (not from
# CLAUDE_ENV_FILE written at session start: that header arrived empty); the `url` is not
# interpolated, and a `${VAR}` in it makes the settings file invalid, so every hook in it is
# silently dropped. Hence the literal URL and secret, written only to the local settings (0600).
# Claude treats an unreachable http hook as a non-blocking error and runs the tool: so http only
# for events that decide nothing, and for PreToolUse of the tools the gate always lets through.
# Stop stays a command (its pipeline must run even with no daemon); SessionStart stays a command
# (Claude does not call an http SessionStart hook) and starts the daemon.
HTTP_EVENTS = ("PostToolUse", "PostToolUseFailure", "PostToolBatch", "UserPromptSubmit", "SubagentStart", "SessionEnd")
FREE_TOOLS = sorted(READ_ONLY_TOOLS - {"Read", "Grep", "Glob", "LS"})  # Read & co. may be refused (keys)
FREE_MATCHER = "^(?:" + "|".join(FREE_TOOLS) + ")$"
HELD_MATCHER = "^(?!(?:" + "|".join(FREE_TOOLS) + ")$)"  # every other tool, unknown ones included
HTTP_TIMEOUT_S = 30


def _http_handler(http: dict[str, str], event: str) -> dict[str, object]:
    return {"type": "http", "url": http["url"], "headers": {"X-Vacant-Token": http["token"]},
            "timeout": HTTP_TIMEOUT_S if event != "SessionEnd" else 2}


# -- `vacant do` ----------------------------------------------------------------------------------


class ClaudeDriver(Driver):
    platform = "claude"
    can_continue = True
    VALUE = {"--agent", "--agents", "--append-system-prompt", "--append-system-prompt-file", "--system-prompt",
             "--system-prompt-file", "--debug-file", "--effort", "--fallback-model", "--input-format",
             "--json-schema", "--max-budget-usd", "--max-turns", "--model", "-n", "--name", "--output-format",
             "--permission-mode", "--permission-prompt-tool", "--plugin-dir", "--plugin-url",
             "--remote-control-session-name-prefix", "--session-id", "--setting-sources", "--settings"}
    VARIADIC = {"--add-dir", "--allowedTools", "--allowed-tools", "--betas", "--disallowedTools",
                "--disallowed-tools", "--file", "--mcp-config", "--tools"}
    OPTIONAL = {"-d", "--debug", "--from-pr", "--prompt-suggestions", "--remote-control", "-r", "--resume",
                "-w", "--worktree"}
    SESSION_OPTS = {"--session-id", "-r", "--resume", "-c", "--continue", "--fork-session"}

    def parsed(self, argv: list[str]) -> Parsed:
        return parse_args(argv[1:], self.VALUE, self.VARIADIC, self.OPTIONAL)

    def prepare(self) -> None:
        parsed = self.parsed(self.argv)
        if parsed.has("--bare", "--safe-mode"):
            raise DoError("claude --bare and --safe-mode skip every hook: vacant do cannot record that run")
        settings: dict[str, Any] = {}
        given = parsed.value("--settings")
        if given is not None:
            try:
                settings = json.loads(Path(given).read_text() if not given.lstrip().startswith("{") else given)
            except (OSError, ValueError) as error:
                raise DoError(f"cannot read the --settings you gave ({error})") from None
        from vacant.platforms.settings_file import hook_command  # `vacant do` and install only: not on a hook call

        hooks = settings.setdefault("hooks", {})
        for event, groups in PLATFORM.hooks_block(hook_command("claude")).items():
            hooks[event] = list(hooks.get(event, [])) + groups
        problems = PLATFORM.validate_settings(settings)
        if problems:
            raise DoError("the merged --settings would break Claude's hook schema: " + "; ".join(problems))
        if self.wall is not None:  # Claude's own sandbox, for this run's Bash commands
            from vacant.platforms.settings_file import overlay_apply

            try:
                settings, _ = overlay_apply(settings, Claude.sandbox_settings(self.wall, self.root))
            except ValueError as error:
                raise DoError(f"cannot add the wall to the --settings you gave ({error})") from None
            from vacant.core.wall import sandbox_tmpdir_too_long

            if sandbox_tmpdir_too_long(self.env.get("TMPDIR")):
                # its sandbox's sockets would not fit; /tmp's pointer directory is walled already
                self.env["TMPDIR"] = "/tmp"
            from vacant.platforms import git_exclude

            # git add -A passes the sandbox's placeholders by, for this run (taken out at close)
            git_exclude.install(self.root, "claude-do", [], git_exclude.lines_for(
                self.root, Claude.sandbox_placeholders, Claude.sandbox_placeholder_dirs))
        self.settings = json.dumps(settings, separators=(",", ":"))
        self.session = parsed.value("--session-id") or parsed.value("-r", "--resume")
        self.pin = self.session is None and not parsed.has("-c", "--continue")
        if self.pin:
            import uuid  # `vacant do` only: uuid is not worth its import on the hook's hot path

            self.session = str(uuid.uuid4())

    def close(self) -> None:
        super().close()
        if self.wall is not None:
            from vacant.platforms import git_exclude

            git_exclude.uninstall(self.root, "claude-do")

    def first(self) -> list[str]:
        rest = without(self.parsed(self.argv), {"--settings"})
        prompt = self.parsed(self.argv).positionals
        pin = ["--session-id", str(self.session)] if self.pin else []
        return [self.argv[0], *prompt, *rest, *pin, "--settings", self.settings]

    def resume(self, session: str, feedback: str) -> list[str]:
        rest = without(self.parsed(self.argv), {"--settings"} | self.SESSION_OPTS)
        return [self.argv[0], feedback, *rest, "--resume", session, "--settings", self.settings]


Claude.driver = ClaudeDriver
PLATFORM = Claude()
