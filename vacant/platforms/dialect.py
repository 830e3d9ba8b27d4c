"""The Claude dialect: the code shared by every platform whose hooks are Claude-shaped JSON
settings (`{"hooks": {Event: [{"matcher", "hooks": [{"type": "command", "command", "timeout"}]}]}}`),
whose payloads name their event in `hook_event_name` and whose answers are Claude's JSON.

A platform of the dialect is a class of facts over `ClaudeDialect` (its names, events, settings
files, timeouts and their unit, the handler types it runs, the variable naming its session) and
overrides only where it differs: Qwen Code, Gemini CLI and Copilot CLI are that (Copilot's flat
handlers and Gemini's deny override a method each). Adding another is one module of facts plus one
registry line (tests/unit/platforms/test_throwaway_platform.py makes one). Its `vacant do` driver,
`SettingsDriver`, gives a run the hooks through a system settings file of the run's own, named by
the platform's variable, never through a settings file of the person's.

Module level imports what a hook call imports anyway (hot path): the settings file code loads at
install and doctor time only.
"""

from __future__ import annotations

from vacant.core import leanjson as json  # json without `import json` (hot path)
from pathlib import Path

from vacant.core.calls import HookCall, Read, Response
from vacant.platforms.base import Diagnosis, PlatformBase, diagnosis, render_hook_json
from vacant.platforms.driver import DoError, Driver

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hook path
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any  # a payload is JSON: each field is read with a check of its type


class ClaudeDialect(PlatformBase):
    """A platform speaking Claude's hook dialect, as facts (the class attributes below) and the
    code they drive."""

    display = ""  # the platform's name in what doctor and `vacant do` say ("Qwen")
    unreadable = "loads no hook from it"  # what it does with a settings file that is not JSON
    workspace_file = ""  # the hooks' settings file, relative to the workspace (project scope; local too)
    local_file: str | None = None  # an uncommitted settings file of the workspace's, if the platform has one
    home_file = ""  # the hooks' settings file, relative to the home directory (user scope)
    timeouts: dict[str, int] = {}  # noqa: RUF012 - never mutated; event -> the hook's timeout
    default_timeout = 60  # every other event's
    timeout_unit = "seconds"  # what the platform counts `timeout` in
    matcher_events: tuple[str, ...] = ()  # the events whose group carries `"matcher": "*"` (the tool events)
    hook_types: tuple[str, ...] = ("command",)  # the handler types it runs (another type breaks the file)
    command_key = "command"  # the handler's field holding the command line
    install_defaults: dict[str, object] | None = None  # top-level keys its settings file must have
    session_env: str | None = None  # the variable naming the session when the payload does not
    key_fields: tuple[str, ...] = ("tool_use_id",)  # the payload fields naming a tool call, first set wins
    system_settings_env: str | None = None  # the variable naming a system settings file (`vacant do`'s)
    system_settings = ""  # that file's default path

    def __init_subclass__(cls, **kwargs: object) -> None:
        """A platform with a system settings file gets `SettingsDriver` for `vacant do` under its
        own name, unless it states a driver of its own (Qwen's and Gemini's add to it)."""
        super().__init_subclass__()
        if cls.system_settings_env and "driver" not in vars(cls):
            cls.driver = type(f"{cls.__name__}Driver", (SettingsDriver,), {"platform": cls.name, "facts": cls})

    # -- payloads ----------------------------------------------------------------------------

    def parse(self, payload: dict[str, Any], env: dict[str, str]) -> HookCall:
        event = str(payload.get("hook_event_name", ""))
        root = self.project_dir(env) or payload.get("cwd") or "."
        kind = self.events.get(event, "ignore")
        if kind == "prompt" and not payload.get("prompt"):
            kind = "ignore"  # an empty prompt (Qwen sends one before each model request after a tool)
        session = payload.get("session_id") or (env.get(self.session_env) if self.session_env else None)
        call = HookCall(
            kind=kind,
            session_id=str(session or "unknown"),
            workspace=Path(str(root)),
            transcript_path=payload.get("transcript_path"),
            source=payload.get("source"),
            stop_hook_active=bool(payload.get("stop_hook_active")),
            reason=payload.get("reason"),
        )
        if kind == "prompt":
            call.reads = [Read("prompt", "user", str(payload.get("prompt", "")))]
        elif kind in ("tool_pre", "tool_post"):
            self.parse_tool(call, payload, env)
        return call

    def parse_tool(self, call: HookCall, payload: dict[str, Any], env: dict[str, str]) -> None:
        """A tool step's fields as Claude's payloads give them: the tool, its key (`key_fields`),
        its intent; its scope unknown (it may touch anything); at the Post its outcome
        (PostToolUseFailure: failed). A platform that knows its tools overrides this."""
        call.tool = str(payload.get("tool_name", ""))
        call.tool_input = payload.get("tool_input")
        call.key = str(next((payload[field] for field in self.key_fields if payload.get(field)), ""))
        call.scope = None
        call.cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
        call.tool_kind, call.intent = self.intent(call.tool, call.tool_input)
        if call.kind == "tool_post":
            call.outcome = "failed" if payload.get("hook_event_name") == "PostToolUseFailure" else "ok"

    @staticmethod
    def intent(tool: str, tool_input: object) -> tuple[str | None, dict[str, object]]:
        return None, {}

    # -- responses ---------------------------------------------------------------------------

    def render(self, call: HookCall, response: Response) -> tuple[str, int]:
        return render_hook_json(call, response)  # Claude's JSON contract

    # -- installation ------------------------------------------------------------------------

    scopes: tuple[str, ...] = ("project", "user")

    def files(self, root: Path) -> list[Path]:
        """Every file an install may write, in every scope (`vacant init` lists what it touched)."""
        return [self.settings_path(root, scope) for scope in self.scopes]

    def user_dir(self) -> Path:
        """Where `home_file` is relative to."""
        return Path.home()

    def settings_path(self, root: Path, scope: str) -> Path:
        if scope == "user":
            return self.user_dir() / self.home_file
        if scope == "local" and self.local_file:
            return Path(root) / self.local_file
        if scope in ("project", "local"):
            return Path(root) / self.workspace_file
        raise ValueError(f"unknown scope {scope!r}: " + ("use local, project or user" if self.local_file
                                                         else "use project (or local) or user"))

    def hook_handler(self, event: str, command: str) -> dict[str, object]:
        return {"type": "command", self.command_key: command, "timeout": self.timeouts.get(event, self.default_timeout)}

    def hooks_block(self, command: str) -> dict[str, list[dict[str, Any]]]:
        """vacant's hook for every event, as the settings file's `hooks` holds it."""
        block: dict[str, list[dict[str, Any]]] = {}
        for event in self.events:
            group: dict[str, object] = {"hooks": [self.hook_handler(event, command)]}
            if event in self.matcher_events:
                group["matcher"] = "*"
            block[event] = [group]
        return block

    def install(self, root: Path, scope: str, hook_command: str) -> Path:
        from vacant.platforms import settings_file  # install time only: off the hot path

        path = self.settings_path(root, scope)
        settings_file.install(path, self.hooks_block(hook_command), self.validate_settings,
                              defaults=self.install_defaults)
        return path

    def uninstall(self, root: Path, scope: str) -> Path | None:
        from vacant.platforms import settings_file

        path = self.settings_path(root, scope)
        return path if settings_file.uninstall(path) else None

    # -- the settings' schema ----------------------------------------------------------------

    def validate_settings(self, settings: dict[str, object]) -> list[str]:
        """What in the settings would keep a vacant hook from running."""
        from vacant.platforms.settings_file import hook_problems

        return hook_problems(settings, self.group_problems, self.handler_problems)

    @staticmethod
    def group_problems(where: str, group: dict[str, object]) -> list[str]:
        if "matcher" in group and not isinstance(group["matcher"], str):
            return [f"{where}.matcher must be a string"]
        return []

    def handler_problems(self, where: str, handler: object) -> list[str]:
        if not isinstance(handler, dict):
            return [f"{where} must be an object"]
        problems = []
        if handler.get("type") not in self.hook_types:
            problems.append(f"{where}.type is {handler.get('type')!r}; " + (
                f"allowed: {', '.join(self.hook_types)}" if len(self.hook_types) > 1
                else f"{self.display} runs only \"command\" hooks"))
        elif handler.get("type") == "command" and not isinstance(handler.get(self.command_key), str):
            problems.append(f"{where}.{self.command_key} must be a string")
        timeout = handler.get("timeout")
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0):
            problems.append(f"{where}.timeout must be a positive number of {self.timeout_unit}")
        return problems

    # -- doctor ------------------------------------------------------------------------------

    def doctor(self, root: Path, hook_command: str) -> list[Diagnosis]:
        """Each settings file's schema and switches, the commands vacant's hooks run, whether they
        are installed at all, and the platform's own advice."""
        from vacant.platforms import settings_file  # doctor time only

        root = Path(root)
        report: list[Diagnosis] = []
        installed_in: list[str] = []
        for scope in self.scopes:
            path = self.settings_path(root, scope)
            if not path.exists():
                continue
            try:
                settings = json.loads(path.read_text())
            except ValueError as error:
                report.append(diagnosis(str(path), False, f"not valid JSON ({error}): {self.display} {self.unreadable}"))
                continue
            if not isinstance(settings, dict):
                report.append(diagnosis(str(path), False, "not a JSON object"))
                continue
            problems = self.validate_settings(settings)
            report.append(diagnosis(str(path), not problems, "; ".join(problems) or "valid hook schema"))
            ours = settings_file.count_ours(settings)
            report += self.switches(path, settings, ours)
            if ours:
                installed_in.append(scope)
            for command in sorted(self.our_commands(settings)):
                problem = settings_file.command_problem(command)
                if problem:
                    report.append(diagnosis("hook command", False, f"{path} runs {command!r}, which cannot start: "
                                            f"{problem}; run `vacant init --platform {self.name} --scope {scope}` again"))
        report.append(diagnosis("hooks installed", bool(installed_in), "vacant's hooks are installed" if installed_in
                                else f"run `vacant init --platform {self.name}`"))
        return report + self.advice_lines(root, installed_in)

    def switches(self, path: Path, settings: dict[str, object], ours: int) -> list[Diagnosis]:
        """What in a settings file turns the hooks off (`disableAllHooks`, by default)."""
        if settings.get("disableAllHooks"):
            return [diagnosis(f"{path} disableAllHooks", False, "disableAllHooks is true: no hook runs at all")]
        return []

    def our_commands(self, settings: dict[str, object]) -> Iterable[str]:
        from vacant.platforms.settings_file import our_commands

        return our_commands(settings)

    def advice_lines(self, root: Path, installed_in: list[str]) -> list[Diagnosis]:
        """The platform's own advice, after the rest."""
        return []


class SettingsDriver(Driver):
    """vacant's hooks through a system settings file of the run's own (the platform's
    `system_settings_env`: the person's system settings merged with the hooks), never a settings
    file of theirs."""

    facts: type[ClaudeDialect] = ClaudeDialect  # the platform's class (its facts are class attributes)

    def prepare(self) -> None:
        self.settings = self.write_settings(self.tmp / f"{self.platform}-system-settings.json")

    def write_settings(self, path: Path) -> Path:
        """Write the run's system settings to `path` and name it in the run's environment."""
        from vacant.platforms.settings_file import hook_command

        dialect = self.facts()
        assert dialect.system_settings_env is not None
        source = Path(self.env.get(dialect.system_settings_env) or dialect.system_settings)
        try:
            settings = json.loads(source.read_text()) if source.exists() else {}
        except (OSError, ValueError) as error:
            raise DoError(f"cannot read {dialect.display}'s system settings {source} ({error})") from None
        hooks = settings.setdefault("hooks", {})
        for event, groups in dialect.hooks_block(hook_command(self.platform)).items():
            hooks[event] = list(hooks.get(event, [])) + groups
        path.write_text(json.dumps(settings))
        self.env[dialect.system_settings_env] = str(path)
        return path
