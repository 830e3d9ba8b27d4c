"""`vacant do`: run an agent for several rounds, recorded, with vacant's hooks there for the
duration only.

One round = one run of the agent's process. When it exits, the Stop pipeline runs on the run (the
platform's own Stop hook only records the `stop` while `vacant do` owns the rounds: $VACANT_DO is
set for the agent and so for its hooks). While blocking findings remain and rounds are left, the
same session is continued with the feedback as the next prompt:

    claude -p --resume <id> FEEDBACK       codex exec resume <id> FEEDBACK       opencode run --session <id> FEEDBACK

`--rounds N` counts those continuations (the same meaning as the contract's `[stop] rounds`, which
is the default), so the agent runs at most N + 1 times. Each round ends with a `round` event in
the step log; the exit code says whether the deliverable ended green.

How the hooks get there without touching a settings file (a test compares each byte for byte
after a normal exit, an error, SIGINT and SIGTERM):
- Claude Code: `--settings <inline JSON>` with the hooks block (merged into the person's own
  `--settings`, when they gave one).
- Codex: `-c hooks.<Event>=[…]` session flags. Codex runs untrusted hooks in `exec` silently never,
  and trust can only be persisted in the person's config.toml (`-c hooks.state…` is ignored), so
  the session-flag hooks run with `--dangerously-bypass-hook-trust` — and only after Codex's own
  `hooks/list` showed that no other enabled hook is untrusted (the flag would run those too).
  When `vacant init --platform codex` already installed vacant's hooks, nothing is added.
- OpenCode: the plugin in a temporary file, given as a `file://` entry of the `plugin` list of
  $OPENCODE_CONFIG_CONTENT (merged into the person's own, when they set one); $PWD is set.
- Any other command: no hooks at all. A watchdog observer turns each burst of file changes into
  one step of the actor `command/<program>` (vacant/platforms/command.py); it asks the kernel for
  no open/read/close-nowrite events (a read-only pass would flood the queue) and falls back to a
  full scan after a queue overflow.
"""

from __future__ import annotations

import json
import logging
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from vacant.core.exitcodes import Exit
from vacant.core.locations import ensure_state_dir, list_runs, run_dir, state_dir
from vacant.platforms.all_platforms import load
from vacant.platforms.settings_file import InstallError, hook_command
from vacant.record.recorder import DO_ENV, Recorder
from vacant.store.steplog import StepLog, file_lock

PLATFORMS = ("claude", "codex", "opencode", "command")
KNOWN_PROGRAMS = {"claude": "claude", "codex": "codex", "opencode": "opencode"}
DEFAULT_BURST_GAP_S = 0.5
KILL_GRACE_S = 10.0
HOOK_SETTLE_TIMEOUT_S = 60.0


class DoError(RuntimeError):
    """`vacant do` cannot run as asked (one sentence saying what to do)."""


class Interrupted(Exception):
    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


# -- command lines -------------------------------------------------------------------------------


@dataclass
class Parsed:
    """A command line split the way the agent's own parser splits it."""

    options: list[list[str]]  # every option: its token(s), with its values, in order
    positionals: list[str]
    values: dict[str, list[str | None]] = field(default_factory=dict)  # option -> values given

    def value(self, *names: str) -> str | None:
        for name in names:
            for value in self.values.get(name, []):
                if value is not None:
                    return value
        return None

    def has(self, *names: str) -> bool:
        return any(name in self.values for name in names)


def parse_args(tokens: list[str], value_opts: set[str], variadic: set[str] = frozenset(),
               optional: set[str] = frozenset()) -> Parsed:
    """Split options from positionals (commander/clap/yargs alike: `--opt=v`, `--opt v`, variadic
    options eat every following non-option token, optional values only a non-option one)."""
    parsed = Parsed([], [])
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token == "--":
            parsed.positionals += tokens[i + 1:]
            break
        if not token.startswith("-") or token == "-":
            parsed.positionals.append(token)
            i += 1
            continue
        name, eq, inline = token.partition("=")
        taken = [token]
        values: list[str | None] = []
        if eq:
            values.append(inline)
        elif name in value_opts and i + 1 < len(tokens):
            taken.append(tokens[i + 1])
            values.append(tokens[i + 1])
            i += 1
        elif name in variadic:
            while i + 1 < len(tokens) and not tokens[i + 1].startswith("-"):
                taken.append(tokens[i + 1])
                values.append(tokens[i + 1])
                i += 1
        elif name in optional and i + 1 < len(tokens) and not tokens[i + 1].startswith("-"):
            taken.append(tokens[i + 1])
            values.append(tokens[i + 1])
            i += 1
        else:
            values.append(None)
        parsed.options.append(taken)
        parsed.values.setdefault(name, []).extend(values)
        i += 1
    return parsed


def _without(parsed: Parsed, names: set[str]) -> list[str]:
    """The option tokens, minus the options named (with their values)."""
    out: list[str] = []
    for taken in parsed.options:
        if taken[0].partition("=")[0] not in names:
            out += taken
    return out


# -- drivers: what differs per platform -----------------------------------------------------------


class Driver:
    """One platform's way of installing hooks for one run, and of continuing a session."""

    platform = "command"
    can_continue = False

    def __init__(self, argv: list[str], root: Path, env: dict[str, str], tmp: Path) -> None:
        self.argv = list(argv)
        self.root = root
        self.env = env
        self.tmp = tmp
        self.session: str | None = None  # known before the first round, when the driver can pin it

    @property
    def program(self) -> str:
        return os.path.basename(self.argv[0])

    def prepare(self) -> None:
        """Make the hooks reach the agent (env, extra arguments); never a settings file."""

    def first(self) -> list[str]:
        return list(self.argv)

    def resume(self, session: str, feedback: str) -> list[str]:
        raise NotImplementedError

    def finish_round(self, run: Path | None) -> None:
        """Close what the platform's hooks did not (OpenCode has no session end)."""


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
        from vacant.platforms import claude

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
        hooks = settings.setdefault("hooks", {})
        for event, groups in claude.PLATFORM.hooks_block(hook_command("claude")).items():
            hooks[event] = list(hooks.get(event, [])) + groups
        problems = claude.validate_settings(settings)
        if problems:
            raise DoError("the merged --settings would break Claude's hook schema: " + "; ".join(problems))
        self.settings = json.dumps(settings, separators=(",", ":"))
        self.session = parsed.value("--session-id") or parsed.value("-r", "--resume")
        self.pin = self.session is None and not parsed.has("-c", "--continue")
        if self.pin:
            self.session = str(uuid.uuid4())

    def first(self) -> list[str]:
        rest = _without(self.parsed(self.argv), {"--settings"})
        prompt = self.parsed(self.argv).positionals
        pin = ["--session-id", self.session] if self.pin else []
        return [self.argv[0], *prompt, *rest, *pin, "--settings", self.settings]

    def resume(self, session: str, feedback: str) -> list[str]:
        rest = _without(self.parsed(self.argv), {"--settings"} | self.SESSION_OPTS)
        return [self.argv[0], feedback, *rest, "--resume", session, "--settings", self.settings]


class CodexDriver(Driver):
    platform = "codex"
    can_continue = True
    VALUE = {"-c", "--config", "--enable", "--disable", "--remote", "--remote-auth-token-env", "-m", "--model",
             "--local-provider", "-p", "--profile", "-s", "--sandbox", "-a", "--ask-for-approval", "-C", "--cd",
             "--add-dir", "--thread-source", "--cyber-access-program", "--output-schema", "--color", "-o",
             "--output-last-message"}
    VARIADIC = {"-i", "--image"}
    RESUME_DROP = {"--last", "--all", "-i", "--image"}

    def split(self) -> tuple[list[str], str | None, list[str]]:
        """(tokens before the subcommand, the subcommand, the tokens after it)."""
        tokens = self.argv[1:]
        i = 0
        while i < len(tokens):
            token = tokens[i]
            if token in ("exec", "e"):
                return tokens[:i], "exec", tokens[i + 1:]
            if token.startswith("-"):
                i += 2 if token in self.VALUE else 1
                continue
            break
        return tokens, None, []

    def prepare(self) -> None:
        from vacant.platforms import codex

        top, sub, after = self.split()
        self.extra: list[str] = []
        if sub == "exec" and after[:1] == ["resume"]:
            parsed = parse_args(after[1:], self.VALUE, self.VARIADIC)
            if parsed.positionals and not parsed.has("--last"):
                self.session = parsed.positionals[0]
        if installed_codex_hooks(self.root):
            return  # `vacant init --platform codex` put them there, trusted: adding more would double them
        binary = shutil.which(self.argv[0], path=self.env.get("PATH")) or self.argv[0]
        untrusted = foreign_untrusted_codex_hooks(binary, self.root, self.env)
        if untrusted:
            raise DoError(
                f"{len(untrusted)} of your Codex hooks are not trusted ({untrusted[0]}…): vacant do would have to "
                "bypass hook trust for its own, which would run those too. Trust or remove them, or run "
                "`vacant init --platform codex` once (vacant's hooks then stay installed and trusted)"
            )
        command = hook_command("codex")
        for event, groups in codex.PLATFORM.hooks_block(command).items():
            handlers = ",".join(
                "{type=\"command\",command=%s,timeout=%d}" % (json.dumps(h["command"]), h["timeout"])
                for group in groups for h in group["hooks"]
            )
            self.extra += ["-c", f"hooks.{event}=[{{hooks=[{handlers}]}}]"]
        self.extra.append("--dangerously-bypass-hook-trust")

    def first(self) -> list[str]:
        top, sub, after = self.split()
        if sub is None:
            return [self.argv[0], *top, *self.extra, *after]
        return [self.argv[0], *top, sub, *self.extra, *after]

    def resume(self, session: str, feedback: str) -> list[str]:
        top, sub, after = self.split()
        if sub is None:  # the interactive TUI: `codex resume <id> <prompt>`
            parsed = parse_args(top, self.VALUE, self.VARIADIC)
            return [self.argv[0], *_without(parsed, self.RESUME_DROP), *self.extra, "resume", session, feedback]
        if after[:1] == ["resume"]:
            parsed = parse_args(after[1:], self.VALUE, self.VARIADIC)
            return [self.argv[0], *top, sub, *self.extra, "resume", *_without(parsed, self.RESUME_DROP), session, feedback]
        parsed = parse_args(after, self.VALUE, self.VARIADIC)
        return [self.argv[0], *top, sub, *self.extra, *_without(parsed, self.RESUME_DROP), "resume", session, feedback]


def installed_codex_hooks(root: Path) -> bool:
    """vacant's hooks installed by `vacant init --platform codex` and trusted (offline check)."""
    from vacant.platforms import codex

    try:
        _, config = codex._read_config(codex.config_path())
    except InstallError:
        return False
    for scope in ("project", "user"):
        hooks = codex.our_hooks(codex.PLATFORM.hooks_path(root, scope))
        if hooks and all(codex.trusted_hash(config, key) == value for key, value in hooks.items()):
            return True
    return False


def foreign_untrusted_codex_hooks(binary: str, root: Path, env: dict[str, str]) -> list[str]:
    """Enabled, non-managed hooks that are not vacant's and not trusted (Codex's own `hooks/list`)."""
    from vacant.platforms import codex
    from vacant.platforms.settings_file import MARK

    saved = {key: os.environ.get(key) for key in ("CODEX_HOME", "HOME")}
    try:
        for key in saved:  # the app-server reads the agent's CODEX_HOME
            if env.get(key):
                os.environ[key] = env[key]
        with codex.AppServer(binary, root) as server:
            listed = server.hooks(root)
    except codex.AppServerError as error:
        raise DoError(f"could not ask Codex which hooks are trusted ({error}); run `vacant init --platform codex` "
                      "once instead") from None
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return [str(h.get("key")) for h in listed
            if h.get("enabled", True) and not h.get("isManaged") and h.get("trustStatus") != "trusted"
            and MARK not in str(h.get("command", ""))]


class OpenCodeDriver(Driver):
    platform = "opencode"
    VALUE = {"--log-level", "--command", "-s", "--session", "-m", "--model", "--agent", "--format", "--title",
             "--attach", "-p", "--password", "-u", "--username", "--dir", "--port", "--variant", "--prompt"}
    VARIADIC = {"-f", "--file"}
    SESSION_OPTS = {"-s", "--session", "-c", "--continue", "--fork"}

    @property
    def can_continue(self) -> bool:  # type: ignore[override]
        return self.argv[1:2] == ["run"]

    def prepare(self) -> None:
        from vacant.platforms import opencode

        parsed = parse_args(self.argv[1:], self.VALUE, self.VARIADIC)
        if parsed.has("--pure"):
            raise DoError("opencode --pure loads no plugin: vacant do cannot record that run")
        self.session = parsed.value("-s", "--session")
        self.env["PWD"] = str(self.root)  # OpenCode takes its project directory from $PWD
        installed = [opencode.PLATFORM.plugin_path(self.root, scope) for scope in ("project", "user")]
        if any(p.exists() and opencode.PLUGIN_MARK in p.read_text(errors="replace") for p in installed):
            return  # `vacant init --platform opencode` installed it
        # a `file://` plugin entry, not a config directory: OpenCode installs its plugin SDK into
        # every config directory before loading its plugins (~10 s on a fresh one)
        plugin = self.tmp / opencode.PLUGIN_NAME
        plugin.write_text(opencode.render_plugin(hook_command("opencode")))
        try:
            content = json.loads(self.env.get("OPENCODE_CONFIG_CONTENT") or "{}")
        except ValueError:
            raise DoError("$OPENCODE_CONFIG_CONTENT is not valid JSON") from None
        content["plugin"] = [*content.get("plugin", []), plugin.as_uri()]
        self.env["OPENCODE_CONFIG_CONTENT"] = json.dumps(content)

    def resume(self, session: str, feedback: str) -> list[str]:
        parsed = parse_args(self.argv[2:], self.VALUE, self.VARIADIC)
        return [self.argv[0], "run", feedback, *_without(parsed, self.SESSION_OPTS), "--session", session]

    def finish_round(self, run: Path | None) -> None:
        """OpenCode reports no session end: close open steps and take the final scan here."""
        from vacant.platforms import opencode

        if run is None:
            return
        session = run_session(run)
        call = opencode.PLATFORM.parse({"event": "session.end", "sessionID": session, "directory": str(self.root),
                                        "reason": "process exited"}, self.env)
        Recorder(self.root, session, opencode.PLATFORM).handle(call)


DRIVERS = {"claude": ClaudeDriver, "codex": CodexDriver, "opencode": OpenCodeDriver}


def do_root(cwd: Path) -> Path:
    """The workspace `vacant do` records: the nearest `.vacant/` ancestor inside the git top level
    (a `.vacant/` above it belongs to an enclosing workspace), else the git top level, else `cwd`."""
    from vacant.core.locations import find_root, new_root

    top, found = new_root(cwd), find_root(cwd)
    if (top / ".git").exists() and not (found == top or top in found.parents):
        return top
    return found


def pick_platform(argv: list[str], platform: str) -> str:
    if platform == "auto":
        return KNOWN_PROGRAMS.get(os.path.basename(argv[0]), "command")
    if platform == "claude-code":
        return "claude"
    if platform not in PLATFORMS:
        raise DoError(f"--platform must be one of {', '.join(PLATFORMS)} or auto")
    return platform


# -- the watcher (any other command) --------------------------------------------------------------


class Watcher:
    """Bursts of file changes -> `change_set` calls of the command platform.

    A burst ends after `gap` seconds without a change. The kernel is asked for creations,
    modifications, deletions, moves and close-after-write only: opens, reads and close-nowrite
    never reach the queue. A kernel queue overflow (watchdog logs it and rebuilds its watches) or
    more dirty paths than MAX_DIRTY make the next burst a full scan."""

    MAX_DIRTY = 5000

    def __init__(self, root: Path, on_burst: Callable[[list[str] | None], None], gap: float) -> None:
        self.root = Path(root).resolve()
        self.skip = [self.root / ".git", state_dir(self.root).resolve()]
        self.on_burst = on_burst
        self.gap = gap
        self.lock = threading.Lock()
        self.dirty: set[str] = set()
        self.overflow = False
        self.last = 0.0
        self.stopping = threading.Event()
        self.events = 0
        self.overflows = 0

    def _skipped(self, path: str) -> bool:
        p = Path(path)
        return any(p == s or s in p.parents for s in self.skip) or not (p == self.root or self.root in p.parents)

    def note(self, *paths: str) -> None:
        kept = [p for p in paths if p and not self._skipped(p)]
        if not kept:
            return
        with self.lock:
            self.events += 1
            if len(self.dirty) + len(kept) > self.MAX_DIRTY:
                self.overflow = True
                self.dirty.clear()
            if not self.overflow:
                self.dirty.update(kept)
            self.last = time.monotonic()

    def queue_overflowed(self) -> None:
        with self.lock:
            self.overflow = True
            self.overflows += 1
            self.last = time.monotonic()

    def start(self) -> None:
        from watchdog import events as wd
        from watchdog.observers import Observer

        watcher = self

        class Handler(wd.FileSystemEventHandler):
            def on_any_event(self, event: wd.FileSystemEvent) -> None:
                paths = [os.fsdecode(event.src_path)]
                if getattr(event, "dest_path", ""):
                    paths.append(os.fsdecode(event.dest_path))
                watcher.note(*paths)

        class Overflow(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                if "overflow" in record.getMessage().lower():
                    watcher.queue_overflowed()

        self.log_handler = Overflow()
        for name in ("watchdog.observers",):  # the inotify modules log through it
            logging.getLogger(name).addHandler(self.log_handler)
        wanted = [wd.FileCreatedEvent, wd.FileModifiedEvent, wd.FileDeletedEvent, wd.FileMovedEvent,
                  wd.FileClosedEvent, wd.DirCreatedEvent, wd.DirDeletedEvent, wd.DirMovedEvent]
        self.observer = Observer()
        self.observer.schedule(Handler(), str(self.root), recursive=True, event_filter=wanted)
        self.observer.start()
        self.thread = threading.Thread(target=self._loop, name="vacant-do-bursts", daemon=True)
        self.thread.start()

    def _take(self) -> tuple[bool, list[str] | None]:
        with self.lock:
            if not self.dirty and not self.overflow:
                return False, None
            paths = None if self.overflow else sorted(self.dirty)
            self.dirty.clear()
            self.overflow = False
            return True, paths

    def _loop(self) -> None:
        while not self.stopping.wait(min(0.05, self.gap / 4)):
            with self.lock:
                quiet = (self.dirty or self.overflow) and time.monotonic() - self.last >= self.gap
            if quiet:
                self.flush()

    def flush(self) -> None:
        pending, paths = self._take()
        if pending:
            self.on_burst(paths)

    def stop(self, settle: float = 0.3) -> None:
        """After the command exited: let the last events arrive, then record the last burst."""
        time.sleep(settle)
        self.stopping.set()
        self.thread.join()
        self.observer.stop()
        self.observer.join()
        for name in ("watchdog.observers",):  # the inotify modules log through it
            logging.getLogger(name).removeHandler(self.log_handler)
        self.flush()


class CommandDriver(Driver):
    """A program vacant does not know: recorded by watching the workspace, one run per `vacant do`."""

    platform = "command"

    def __init__(self, argv: list[str], root: Path, env: dict[str, str], tmp: Path, gap: float) -> None:
        super().__init__(argv, root, env, tmp)
        self.gap = gap
        self.session = "do-" + time.strftime("%Y%m%d-%H%M%S") + "-" + uuid.uuid4().hex[:6]
        self.bursts = 0
        self.burst_lock = threading.Lock()
        self.watcher: Watcher | None = None

    def call(self, payload: dict[str, Any]) -> None:
        platform = load("command")
        payload = {"session": self.session, "workspace": str(self.root), "program": self.program,
                   "command": self.argv, **payload}
        Recorder(self.root, self.session, platform).handle(platform.parse(payload, self.env))

    def burst(self, paths: list[str] | None) -> None:
        with self.burst_lock:
            self.bursts += 1
            self.call({"event": "burst", "burst": self.bursts, "paths": paths})

    def before_start(self) -> None:
        self.call({"event": "start"})  # the baseline (state_0), before the command can write
        self.watcher = Watcher(self.root, self.burst, self.gap)
        self.watcher.start()

    def finish_round(self, run: Path | None) -> None:
        if self.watcher is not None:
            self.watcher.stop()
            self.watcher = None
        self.call({"event": "stop"})
        self.call({"event": "end", "reason": "process exited"})


# -- the loop ------------------------------------------------------------------------------------


def run_session(run: Path) -> str:
    """The platform's session id of a recorded run (what `resume` takes)."""
    try:
        with open(run / "events.jsonl", "rb") as handle:
            for raw in handle:
                record = json.loads(raw)
                if record.get("type") == "run_start" and record.get("session"):
                    return str(record["session"])
    except (OSError, ValueError):
        pass
    return run.name


def _sizes(root: Path) -> dict[Path, int]:
    return {run: (run / "events.jsonl").stat().st_size for run in list_runs(root)}


def find_run(root: Path, before: dict[Path, int], session: str | None, cell_platform: str) -> Path | None:
    """The run this round wrote to (its log grew): the known session's, else the only one, else
    the newest of this platform's. None when no hook recorded anything."""
    after = _sizes(root)
    grown = [run for run, size in after.items() if before.get(run) != size]
    if session and run_dir(root, session) in grown:
        return run_dir(root, session)
    if len(grown) > 1:
        same = [run for run in grown if _run_platform(run) == cell_platform]
        grown = same or grown
    return grown[-1] if grown else None


def _run_platform(run: Path) -> str | None:
    try:
        first = json.loads((run / "events.jsonl").read_bytes().split(b"\n", 1)[0])
        return first.get("platform")
    except (OSError, ValueError):
        return None


@dataclass
class Result:
    code: int
    run: Path | None
    rounds: int
    report: dict[str, Any] | None


class Runner:
    def __init__(self, argv: list[str], root: Path, platform: str, rounds: int | None,
                 gap: float = DEFAULT_BURST_GAP_S, out: Callable[[str], None] | None = None,
                 cwd: Path | None = None) -> None:
        if not argv:
            raise DoError("nothing to run: give the agent's command after --, e.g. vacant do -- claude -p \"task\"")
        self.argv = argv
        self.root = Path(root).resolve()
        # agents run at the workspace root (Claude's project dir is its launch directory); a plain
        # command runs where it was given, so that its relative paths keep their meaning
        self.platform = pick_platform(argv, platform)
        self.cwd = Path(cwd or os.getcwd()).resolve() if self.platform == "command" else self.root
        self.rounds = rounds
        self.gap = gap
        self.out = out or (lambda line: print(line, file=sys.stderr, flush=True))
        self.child: subprocess.Popen | None = None
        self.interrupted: int | None = None
        self.terminal = sys.stdin.isatty()
        self.terminal_sigint = False

    # signals: forwarded to the agent; the loop ends after it exits, and cleanup always runs
    def _on_signal(self, signum: int, frame) -> None:
        child = self.child if self.child is not None and self.child.poll() is None else None
        if child is None:
            self.interrupted = signum
            raise Interrupted(signum)
        if signum == signal.SIGINT and self.terminal:
            # Ctrl-C at a terminal reached the agent too (same foreground group): it decides (a
            # TUI stops its turn and goes on); only its dying of it stops `vacant do`
            self.terminal_sigint = True
            return
        self.interrupted = signum
        try:
            child.send_signal(signum)
        except OSError:
            pass

    def _run_child(self, argv: list[str], env: dict[str, str]) -> int:
        try:
            self.child = subprocess.Popen(argv, cwd=str(self.cwd), env={**env, "PWD": str(self.cwd)})
        except OSError as error:
            raise DoError(f"cannot run {argv[0]}: {error.strerror or error}") from None
        deadline = None
        try:
            while True:
                try:
                    return self.child.wait(timeout=0.2)
                except subprocess.TimeoutExpired:
                    if self.interrupted:
                        deadline = deadline or time.monotonic() + KILL_GRACE_S
                        if time.monotonic() > deadline:
                            self.child.kill()  # it ignored the forwarded signal
        finally:
            self.child = None

    def run(self) -> Result:
        from vacant.policy.contract import load_contract

        ensure_state_dir(self.root)
        contract = load_contract(self.root)
        budget = self.rounds if self.rounds is not None else (contract.stop.rounds if contract else 3)
        tmp = Path(tempfile.mkdtemp(prefix="vacant-do-"))
        had_do_env = os.environ.get(DO_ENV)
        os.environ[DO_ENV] = "1"  # the agent's hooks (and the in-process recorder) leave Stop to us
        env = dict(os.environ)
        if self.platform == "command":
            driver: Driver = CommandDriver(self.argv, self.root, env, tmp, self.gap)
        else:
            driver = DRIVERS[self.platform](self.argv, self.root, env, tmp)
        cell = load(self.platform).cell_platform
        handlers = {sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
        run: Path | None = None
        round_no = 0
        try:
            driver.prepare()
            session, feedback = driver.session, None
            while True:
                round_no += 1
                argv = driver.first() if feedback is None else driver.resume(session, feedback)
                before = _sizes(self.root)
                if isinstance(driver, CommandDriver):
                    driver.before_start()
                self.out(f"vacant do: round {round_no}: {shlex.join(_short(argv))}")
                code = self._run_child(argv, env)
                if self.terminal_sigint and code in (-signal.SIGINT, 128 + signal.SIGINT):
                    self.interrupted = signal.SIGINT
                self.terminal_sigint = False
                found = find_run(self.root, before, session, cell)
                grew = found is not None
                run = found or run
                driver.finish_round(run)
                if self.interrupted:
                    raise Interrupted(self.interrupted)
                if run is None:
                    raise DoError(f"{driver.program} exited ({code}) and none of vacant's hooks fired: nothing was "
                                  f"recorded (`vacant doctor --platform {self.platform}` says why)")
                session = session or run_session(run)
                settle_hooks(self.root)
                outcome = _stop(self.root, run, budget if driver.can_continue else 0)
                report = outcome.report
                decision = self._decision(outcome, driver, code, grew)
                StepLog(run).emit("round", round=round_no, command=self.argv, exit_code=code, decision=decision,
                                  session=session, resumed=feedback is not None,
                                  findings=[f["id"] for f in outcome.blocking],
                                  rounds=budget if driver.can_continue else 0)
                self._say(round_no, decision, outcome, code)
                if decision != "continue":
                    code_out = _exit_code(report)
                    if decision == "agent_failed" and code_out == int(Exit.OK):
                        code_out = int(Exit.FAILED)
                    return Result(code_out, run, round_no, report)
                feedback = outcome.feedback
        except Interrupted as stop:
            if run is not None:
                StepLog(run).emit("round", round=round_no, command=self.argv, exit_code=None, decision="interrupted",
                                  signal=stop.signum)
            self.out(f"vacant do: stopped by {signal.Signals(stop.signum).name}; vacant's hooks are gone, "
                     "nothing was verified")
            return Result(int(Exit.INTERRUPTED), run, round_no, None)
        finally:
            for sig, handler in handlers.items():
                signal.signal(sig, handler)
            if had_do_env is None:
                os.environ.pop(DO_ENV, None)
            if isinstance(driver, CommandDriver) and driver.watcher is not None:
                driver.watcher.stopping.set()
                driver.watcher.observer.stop()
            shutil.rmtree(tmp, ignore_errors=True)

    def _decision(self, outcome, driver: Driver, code: int, grew: bool) -> str:
        if code != 0 and not grew:
            return "agent_failed"  # it recorded nothing this round: continuing would only repeat that
        if outcome.feedback and driver.can_continue:
            return "continue"
        if not outcome.report.get("findings"):
            return "nothing_to_verify" if outcome.report.get("nothing_to_verify") else "green"
        if outcome.blocking and driver.can_continue:
            return "budget_spent"
        return "cannot_continue"

    def _say(self, round_no: int, decision: str, outcome, code: int) -> None:
        report = outcome.report
        findings = report.get("findings", [])
        tail = f" (the agent exited {code})" if code else ""
        if decision == "continue":
            self.out(f"vacant do: round {round_no}: {len(outcome.blocking)} blocking finding(s); continuing the "
                     f"session with the feedback (round {report.get('round')} of {report.get('rounds')}){tail}")
        elif decision in ("green", "nothing_to_verify"):
            what = "green" if decision == "green" else "nothing to verify (no checks, no flags): not a pass"
            self.out(f"vacant do: round {round_no}: {what}{tail}")
        elif decision == "agent_failed":
            self.out(f"vacant do: round {round_no}: the agent exited {code} without a recorded step; stopping here")
        else:
            why = "the round budget is spent" if decision == "budget_spent" else "this agent cannot be continued"
            self.out(f"vacant do: round {round_no}: {len(findings)} finding(s) left; {why}{tail}")


def _short(argv: list[str], width: int = 60) -> list[str]:
    return [a if len(a) <= width else a[: width - 1] + "…" for a in argv]


def settle_hooks(root: Path) -> None:
    """Wait for a hook still holding the workspace lock (a plugin's last call may outlive the agent)."""
    with file_lock(state_dir(root) / "lock", HOOK_SETTLE_TIMEOUT_S):
        pass


def _stop(root: Path, run: Path, rounds: int):
    from vacant.attribute.stop import stop

    return stop(root, run, None, rounds=rounds)


def _exit_code(report: dict[str, Any]) -> int:
    if report.get("findings"):
        return int(Exit.FAILED)
    if report.get("nothing_to_verify"):
        return int(Exit.NOTHING_TO_VERIFY)
    return int(Exit.OK)
