"""`vacant do claude …`: the run's command lines (its hooks merged into the --settings it was
given, a session id pinned) and how it resumes with feedback. Its own module: a hook call never
loads the driver (vacant/platforms/claude.py serves `Claude.driver` from here on first use)."""

from __future__ import annotations

from vacant.core import leanjson as json  # json without `import json`
from pathlib import Path

from vacant.platforms.claude import PLATFORM, Claude, validate_settings
from vacant.platforms.driver import DoError, Driver, Parsed, parse_args, without
from vacant.platforms.settings_file import hook_command


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
        settings: dict[str, object] = {}
        given = parsed.value("--settings")
        if given is not None:
            try:
                settings = json.loads(Path(given).read_text() if not given.lstrip().startswith("{") else given)
            except (OSError, ValueError) as error:
                raise DoError(f"cannot read the --settings you gave ({error})") from None
        hooks = settings.setdefault("hooks", {})
        for event, groups in PLATFORM.hooks_block(hook_command("claude")).items():
            hooks[event] = list(hooks.get(event, [])) + groups
        problems = validate_settings(settings)
        if problems:
            raise DoError("the merged --settings would break Claude's hook schema: " + "; ".join(problems))
        if self.wall is not None:  # Claude's own sandbox, for this run's Bash commands
            from vacant.platforms.settings_file import overlay_apply

            try:
                settings, _ = overlay_apply(settings, Claude.sandbox_settings(self.wall))
            except ValueError as error:
                raise DoError(f"cannot add the wall to the --settings you gave ({error})") from None
            from vacant.core.wall import sandbox_tmpdir_too_long

            if sandbox_tmpdir_too_long(self.env.get("TMPDIR")):
                # its sandbox's sockets would not fit; /tmp's pointer directory is walled already
                self.env["TMPDIR"] = "/tmp"
        self.settings = json.dumps(settings, separators=(",", ":"))
        self.session = parsed.value("--session-id") or parsed.value("-r", "--resume")
        self.pin = self.session is None and not parsed.has("-c", "--continue")
        if self.pin:
            import uuid  # `vacant do` only: uuid is not worth its import on the hook's hot path

            self.session = str(uuid.uuid4())

    def first(self) -> list[str]:
        rest = without(self.parsed(self.argv), {"--settings"})
        prompt = self.parsed(self.argv).positionals
        pin = ["--session-id", self.session] if self.pin else []
        return [self.argv[0], *prompt, *rest, *pin, "--settings", self.settings]

    def resume(self, session: str, feedback: str) -> list[str]:
        rest = without(self.parsed(self.argv), {"--settings"} | self.SESSION_OPTS)
        return [self.argv[0], feedback, *rest, "--resume", session, "--settings", self.settings]
