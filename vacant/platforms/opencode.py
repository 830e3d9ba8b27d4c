"""OpenCode (opencode-ai 1.18): a plugin forwards tool calls to `vacant-hook opencode`.

Facts this module relies on (measured on the real CLI: the payloads captured by the
plugin in tests/e2e/test_opencode.py):
- OpenCode has no command hooks, only JS plugins: every `plugins/*.js` of its config directories
  (`<project>/.opencode/`, `~/.config/opencode/`, `$OPENCODE_CONFIG_DIR`) is loaded. The plugin
  template is `vacant/platforms/assets/opencode-plugin.js` (inside the package); it runs the hook command for `tool.execute.before` /
  `tool.execute.after`, `chat.message` and the `session.idle` event, payload on stdin.
- before: `{tool, sessionID, callID}` + `args` (bash `{command, description}`, read `{filePath}`,
  write `{filePath, content}`, edit `{filePath, oldString, newString}`); throwing blocks the tool
  and its error text is what the model gets. The plugin throws on the hook's `{"action": "deny"}`,
  and when the hook gave no answer (not spawned, a non-zero exit or a kill with nothing said, not
  JSON): the gate fails closed in the plugin too. Its other handlers fail open. after: `{title, output, metadata}`; bash carries the
  exit code in `metadata.exit`. A failing tool gets no `after` (its step is closed at run end).
- The model is in no tool payload: the plugin remembers it from `chat.message` (`provider/model`).
- There is no Stop hook: `session.idle` is the nearest, and `opencode run` exits right after it
  (a prompt the plugin queues there never reached the model, not even with the next message). So
  the pipeline only reports at idle; rounds go through `vacant do` (`opencode run --session <id>
  FEEDBACK`).
- OpenCode does not await a plugin's `event` handler: with an asynchronous spawn at idle, `opencode
  run` had exited before the Stop report was written (it came 0.2 s later, every time). The plugin
  runs the idle hook with a synchronous spawn, which holds OpenCode until the report is written.
- OpenCode takes its project directory from $PWD, not from the process cwd.

Module level imports the standard library only (hot path).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from vacant.core.calls import HookCall, Read, Response
from vacant.core.locations import find_root
from vacant.platforms.base import (
    Diagnosis,
    PlatformBase,
    advice,
    diagnosis,
    edit_intent,
    read_file_bytes,
)
from vacant.platforms.driver import DoError, Driver, parse_args, run_session, without
from vacant.platforms.settings_file import hook_command
from vacant.record.recorder import Recorder

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hook path
if TYPE_CHECKING:
    from typing import Any  # JSON: each field is read with a check of its type

EVENT_KINDS = {
    "chat.message": "prompt",
    "tool.execute.before": "tool_pre",
    "tool.execute.after": "tool_post",
    "session.idle": "stop",
    "session.end": "session_end",  # sent by `vacant do` when the process has exited
}
FILE_TOOLS = {"write": "filePath", "edit": "filePath"}
READ_ONLY_TOOLS = frozenset({"read", "glob", "grep", "list", "webfetch", "websearch", "codesearch", "todowrite",
                             "todoread", "skill", "task", "question", "lsp"})
PLUGIN_NAME = "vacant.js"
TEMPLATE = Path(__file__).resolve().parent / "assets" / "opencode-plugin.js"  # shipped in the wheel
PLACEHOLDER = '"__VACANT_HOOK_COMMAND__"'
CANNOT_START_PLACEHOLDER = '"__VACANT_CANNOT_START__"'  # deny.CANNOT_START: what the model reads when the hook cannot start
PLUGIN_MARK = "// vacant-plugin"


def tool_scope(tool: str, args: object, directory: str) -> list[str] | None:
    if tool in FILE_TOOLS:
        path = args.get(FILE_TOOLS[tool]) if isinstance(args, dict) else None
        return [os.path.normpath(os.path.join(directory, path))] if isinstance(path, str) and path else None
    if tool in READ_ONLY_TOOLS:
        return []
    return None  # bash, patch tools, MCP tools and anything unknown may touch anything


def tool_reads(tool: str, args: dict[str, Any], output: object, directory: str) -> list[Read]:
    text = output if isinstance(output, str) else json.dumps(output, sort_keys=True)
    if tool == "read" and isinstance(args.get("filePath"), str):
        path = os.path.normpath(os.path.join(directory, args["filePath"]))
        content = read_file_bytes(path)  # the model saw it with line numbers; the tokens are the file's
        return [Read("file", path, content)]  # None: the recorder takes it from the recorded state
    if tool == "bash":
        return [Read("command", str(args.get("command", "")), text)]
    if tool in ("grep", "glob", "list", "codesearch"):
        return [Read("search", str(args.get("pattern") or args.get("query") or args.get("path") or ""), text)]
    if tool in ("webfetch", "websearch"):
        return [Read("url", str(args.get("url") or "search:" + str(args.get("query", ""))), text)]
    if tool == "task":
        return [Read("subagent", str(args.get("subagent_type") or "task"), text)]
    return []


class OpenCode(PlatformBase):
    # What a fork of OpenCode renames, in one place (vacant/platforms/kilo.py is such a fork): its
    # name, binary, config directory name (`<project>/.<config_name>/plugins`, `(xdg config)/<config_name>`)
    # and the prefix of its environment variables (`<env_prefix>_CONFIG_CONTENT`, ...). The rest is derived.
    name = "opencode"
    cell_platform = "opencode"
    program = "opencode"
    config_name = "opencode"
    env_prefix = "OPENCODE"

    event_key = "event"
    events = EVENT_KINDS

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _derive(cls)

    def headless(self, binary: str, prompt: str, model: str | None, extra: list[str]) -> list[str]:
        return [binary, "run", "--format", "json", *(["-m", model] if model else []), prompt, *extra]
    # Feedback rounds a `session.idle` can deliver: none. Queueing a prompt from the plugin at idle
    # was measured to be lost in `opencode run` (it exits first), so the pipeline only reports
    # there; `vacant do` gives OpenCode its rounds.
    stop_rounds: int | None = 0

    # -- payloads ----------------------------------------------------------------------------

    def parse(self, payload: dict[str, Any], env: dict[str, str]) -> HookCall:
        event = str(payload.get("event", ""))
        directory = str(payload.get("directory") or env.get("PWD") or os.getcwd())
        agent_id = payload.get("agentID") or None
        call = HookCall(
            kind=EVENT_KINDS.get(event, "ignore"),
            session_id=str(payload.get("sessionID") or "unknown"),
            workspace=self.workspace(directory),
            agent_id=str(agent_id) if agent_id else None,
            agent_type=str(payload["agent"]) if agent_id and payload.get("agent") else None,
            reason=str(payload.get("reason") or "other") if event == "session.end" else None,
        )
        model = payload.get("model")
        if isinstance(model, str) and model:
            call.model = model
        if call.kind == "prompt":
            call.reads = [Read("prompt", "user", str(payload.get("prompt", "")))]
        elif call.kind in ("tool_pre", "tool_post"):
            call.tool = str(payload.get("tool", ""))
            args = payload["args"] if isinstance(payload.get("args"), dict) else {}
            call.tool_input = args
            call.key = str(payload.get("callID", ""))
            call.scope = tool_scope(call.tool, args, directory)
            call.tool_kind, call.intent = self.intent(call.tool, args)
            if call.kind == "tool_post":
                self._post(call, args, payload, directory)
        return call

    @staticmethod
    def intent(tool: str, tool_input: object) -> tuple[str | None, dict[str, Any]]:
        """OpenCode's tools as the core's tool kinds (vacant/core/calls.py TOOL_KINDS)."""
        data = tool_input if isinstance(tool_input, dict) else {}
        if tool == "bash":
            return "shell", {"command": data.get("command")}
        if tool == "write":
            return "write", {"path": data.get("filePath"), "content": data.get("content")}
        if tool == "edit":
            return "edit", edit_intent(data.get("filePath"), data.get("oldString"), data.get("newString"),
                                       data.get("replaceAll"))
        if tool == "read":
            return "read", {"path": data.get("filePath")}
        return None, {}

    @staticmethod
    def workspace(directory: str) -> Path:
        try:
            return find_root(Path(directory))
        except OSError:
            return Path(directory)

    @staticmethod
    def _post(call: HookCall, args: dict[str, Any], payload: dict[str, Any], directory: str) -> None:
        metadata = payload["metadata"] if isinstance(payload.get("metadata"), dict) else {}
        exit_code = metadata.get("exit")
        if call.tool == "bash" and isinstance(exit_code, int) and not isinstance(exit_code, bool):
            call.exit_code = exit_code
            call.outcome = "ok" if exit_code == 0 else "failed"
        else:
            call.outcome = "ok"
        call.reads = tool_reads(str(call.tool), args, payload.get("output", ""), directory)

    # -- responses ---------------------------------------------------------------------------

    def render(self, call: HookCall, response: Response) -> tuple[str, int]:
        """What the plugin acts on: a deny (it throws: the tool does not run, the model gets the
        reason as the tool's error), and where the platform's idle can carry it, a Stop's block (the
        plugin prompts the session with the reason)."""
        if response.action == "deny" and call.kind == "tool_pre":
            return json.dumps({"action": "deny", "reason": response.reason}), 0
        if response.action == "block" and call.kind == "stop" and self.stop_rounds != 0:
            return json.dumps({"action": "block", "reason": response.reason}), 0  # the plugin prompts the session
        return "", 0

    # -- installation ------------------------------------------------------------------------

    scopes = ("project", "user")  # `local` is the project's .opencode/plugins too

    def files(self, root: Path) -> list[Path]:
        """Every file an install may write: the plugin, in each scope."""
        return [self.plugin_path(root, scope) for scope in self.scopes]

    def plugin_path(self, root: Path, scope: str) -> Path:
        if scope in ("project", "local"):
            return Path(root).resolve() / f".{self.config_name}" / "plugins" / PLUGIN_NAME
        if scope == "user":
            return config_dir(self.config_name) / "plugins" / PLUGIN_NAME
        raise ValueError(f"unknown scope {scope!r}: use project (or local) or user")

    def install(self, root: Path, scope: str, hook_command: str) -> Path:
        from vacant.platforms import owned_file  # install time only

        path = self.plugin_path(root, scope)
        owned_file.write(self.name, path, render_plugin(hook_command), PLUGIN_MARK, "plugin")
        return path

    def uninstall(self, root: Path, scope: str) -> Path | None:
        from vacant.platforms import owned_file

        path = self.plugin_path(root, scope)
        return path if owned_file.remove(self.name, path, PLUGIN_MARK) else None

    def doctor(self, root: Path, hook_command: str) -> list[Diagnosis]:
        from vacant.platforms import owned_file  # doctor time only

        report: list[Diagnosis] = []
        installed = []
        for scope in ("project", "user"):
            path = self.plugin_path(root, scope)
            if not path.exists():
                continue
            text = path.read_text(errors="replace")
            if PLUGIN_MARK not in text:
                report.append(diagnosis(str(path), False, "a plugin named vacant.js that vacant did not write"))
                continue
            installed.append(scope)
            line, runs = owned_file.command_check(self.name, scope, path, text)
            report.append(line)
            if runs is not None and not _current(text, runs):
                report.append(advice(f"{path} (code)", "not the plugin this vacant writes (an older one may let a "
                                     f"tool run when its hook gives no answer): run `vacant init --platform {self.name} "
                                     f"--scope {scope}` again"))
        report.append(diagnosis("plugin installed", bool(installed),
                       "vacant's plugin is installed" if installed else
                       f"run `vacant init --platform {self.name}` (or record one run with `vacant do -- "
                       f"{self.program} run …`)"))
        disable = f"{self.env_prefix}_DISABLE_PROJECT_CONFIG"
        if "project" in installed and os.environ.get(disable):
            report.append(diagnosis(disable, False, f"set: {self.program} ignores the project's .{self.config_name}/plugins"))
        report.append(advice("--pure", f"never run {self.program} with --pure: it loads no plugin"))
        return report


def _derive(platform: type[OpenCode]) -> None:
    """The facts that follow from the names a fork changes."""
    platform.hook_env = (platform.env_prefix,)
    platform.wall_refused = (f"{platform.program} runs vacant's plugin in its own process: no wall can keep its "
                             "commands from the record")
    config = platform.config_name
    platform.settings_in_workspace = (f".{config}/plugin", f".{config}/plugins")
    platform.settings_in_home = (f".config/{config}/plugin", f".config/{config}/plugins")  # the default XDG config home


_derive(OpenCode)


def config_dir(name: str = "opencode") -> Path:
    """OpenCode's (or a fork's) global config directory (xdg config)/`name`."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / name


def _current(text: str, hook_command: str) -> bool:
    """The installed plugin is the one this vacant writes for `hook_command` (True when the
    template itself is missing: doctor cannot tell, and reinstalling says why)."""
    from vacant.platforms.settings_file import InstallError

    try:
        return text == render_plugin(hook_command)
    except InstallError:
        return True


def render_plugin(hook_command: str) -> str:
    try:
        template = TEMPLATE.read_text()
    except OSError as error:
        from vacant.platforms.settings_file import InstallError

        raise InstallError(f"the plugin template {TEMPLATE} is missing ({error}): reinstall vacant") from None
    from vacant.platforms.deny import CANNOT_START  # install time only

    return template.replace(PLACEHOLDER, json.dumps(hook_command)).replace(CANNOT_START_PLACEHOLDER,
                                                                             json.dumps(CANNOT_START))


# -- `vacant do` ----------------------------------------------------------------------------------


class OpenCodeDriver(Driver):
    platform = "opencode"
    facts: OpenCode  # the platform this driver runs (OpenCode, or a fork: set beside its PLATFORM)
    VALUE = {"--log-level", "--command", "-s", "--session", "-m", "--model", "--agent", "--format", "--title",
             "--attach", "-p", "--password", "-u", "--username", "--dir", "--port", "--variant", "--prompt"}
    VARIADIC = {"-f", "--file"}
    SESSION_OPTS = {"-s", "--session", "-c", "--continue", "--fork"}

    @property
    def can_continue(self) -> bool:  # type: ignore[override]
        return self.argv[1:2] == ["run"]

    def prepare(self) -> None:
        parsed = parse_args(self.argv[1:], self.VALUE, self.VARIADIC)
        facts = self.facts
        if parsed.has("--pure"):
            raise DoError(f"{facts.program} --pure loads no plugin: vacant do cannot record that run")
        self.session = parsed.value("-s", "--session")
        self.env["PWD"] = str(self.root)  # OpenCode takes its project directory from $PWD
        installed = [facts.plugin_path(self.root, scope) for scope in ("project", "user")]
        if any(p.exists() and PLUGIN_MARK in p.read_text(errors="replace") for p in installed):
            return  # `vacant init --platform opencode` installed it
        # a `file://` plugin entry, not a config directory: OpenCode installs its plugin SDK into
        # every config directory before loading its plugins (~10 s on a fresh one)
        plugin = self.tmp / PLUGIN_NAME
        plugin.write_text(render_plugin(hook_command(facts.name)))
        variable = f"{facts.env_prefix}_CONFIG_CONTENT"
        try:
            content = json.loads(self.env.get(variable) or "{}")
        except ValueError:
            raise DoError(f"${variable} is not valid JSON") from None
        content["plugin"] = [*content.get("plugin", []), plugin.as_uri()]
        self.env[variable] = json.dumps(content)

    def resume(self, session: str, feedback: str) -> list[str]:
        parsed = parse_args(self.argv[2:], self.VALUE, self.VARIADIC)
        return [self.argv[0], "run", feedback, *without(parsed, self.SESSION_OPTS), "--session", session]

    def finish_round(self, run: Path | None) -> None:
        """OpenCode reports no session end: close open steps and take the final scan here."""
        if run is None:
            return
        from vacant.attribute.baseline_probe import start as start_probe  # `vacant do` only

        session = run_session(run)
        call = self.facts.parse({"event": "session.end", "sessionID": session, "directory": str(self.root),
                                 "reason": "process exited"}, self.env)
        Recorder(self.root, session, self.facts, start_probe=start_probe).handle(call)


OpenCode.driver = OpenCodeDriver
PLATFORM = OpenCode()
OpenCodeDriver.facts = PLATFORM
