"""Re-running a shell step's command on the state just before it, behind the wall: the evidence of
what the command itself writes (docs/LEVELS.md, "Who wrote it").

The command runs as the Stop's checks do (vacant/core/sandbox.py through
policy/contract/checks.run_command): a scratch copy of the recorded state before the step is
shown at the workspace's own path, the live paths the record leaves out read-only over it, no
network, the key and state directories empty, its own pid namespace, TMPDIR and process group,
stdin closed, and a time cap of its own: RERUN_FACTOR times what the step took plus
RERUN_MARGIN_S, never more than RERUN_CAP_S. Afterwards the files the step's recorded change
touched are read back from the scratch copy. The scratch copy is rebuilt whole once per Stop;
between re-runs only what a re-run changed is put back (`Rebuilt`).

A command is never re-run (`refusal` says why, in one sentence) when it is ACT by the gate's
rules (vacant/policy/gate), reads a terminal (an editor, a pager, a REPL), ran in the background,
ran longer than MAX_STEP_S, ran outside the workspace, holds text the step log redacted, would not
fit the Stop's remaining budget, or when the wall cannot run here (an agent's command is never
run again as the person).
"""

from __future__ import annotations

import dataclasses
import shlex
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from vacant.attribute.toolwrites import REDACTED
from vacant.core.calls import HookCall
from vacant.core.levels import MAX_STEP_S, RERUN_CAP_S, RERUN_FACTOR, RERUN_MARGIN_S  # one source: docs/LEVELS.md
from vacant.policy.contract.checks import Site, run_command
from vacant.store.objects import ObjectStore
from vacant.store.run import Step
from vacant.store.reuse import ReusedDirectory
from vacant.store.states import Manifest, entries_of

OUTPUT_KEPT = 2000  # characters of the re-run's output kept in the evidence (its tail)

# Programs that read a person at a terminal (with any arguments), and those that do when given none.
TERMINAL = frozenset({"vi", "vim", "nvim", "nano", "emacs", "pico", "less", "more", "most", "man", "top", "htop",
                      "btop", "watch", "ssh", "sftp", "ftp", "telnet", "tmux", "screen", "fzf", "passwd", "su",
                      "sudo", "visudo", "tig", "lazygit", "mc", "ranger", "read", "select"})
REPLS = frozenset({"python", "python3", "node", "irb", "ghci", "psql", "mysql", "sqlite3", "bash", "sh", "zsh",
                   "fish", "lua", "R", "julia", "deno", "bun", "php", "ruby", "perl"})
SEPARATORS = frozenset({";", "&&", "||", "|", "&", "|&", "(", ")", "\n"})
PREFIXES = frozenset({"env", "time", "nohup", "exec", "command", "builtin", "nice", "timeout"})


@dataclass(frozen=True)
class Rerun:
    """One re-run's outcome: its exit (None: it hit its cap), and the step's own paths as it left
    them, as a constructed state's entries (a path that is not there is left out)."""

    exit_code: int | None
    timed_out: bool
    seconds: float
    cap: float
    entries: Manifest
    output: str

    def evidence(self) -> dict[str, object]:
        return {"exit_code": self.exit_code, "timed_out": self.timed_out, "seconds": round(self.seconds, 3),
                "cap_s": round(self.cap, 1)}


def command_of(step: Step) -> str | None:
    """The shell command the step ran, as its platform reported it."""
    command = (step.intent or {}).get("command")
    return command if isinstance(command, str) and command.strip() else None


def cap_for(step: Step) -> float:
    """The re-run's own time cap: a few times what the step took, plus a margin, bounded."""
    took = step.seconds
    if took is None:
        return RERUN_CAP_S
    return min(RERUN_CAP_S, RERUN_FACTOR * took + RERUN_MARGIN_S)


def refusal(step: Step, root: Path, site: Site | None, remaining_s: float) -> str | None:
    """Why this shell step's command must not (or cannot) be re-run, in one sentence; None: it may."""
    command = command_of(step)
    if command is None:
        return "no command was recorded for it, so it cannot be re-run"
    if (step.intent or {}).get("background"):
        return "it ran in the background (the call returned while it went on), so a re-run shows nothing of it"
    if REDACTED.search(command):
        return "its command held text the step log redacted (a secret), so it cannot be re-run as it ran"
    if step.cwd is not None and step.cwd.startswith("/"):
        return f"it ran outside the workspace (in {step.cwd}), where vacant does not rebuild states"
    program = interactive(command)
    if program is not None:
        return f"it runs {program}, which reads a person at a terminal: vacant never re-runs it"
    acts = act(step, command, root)
    if acts is not None:
        return acts
    return _no_room(step, site, remaining_s)


def _no_room(step: Step, site: Site | None, remaining_s: float) -> str | None:
    """The limits of time and of the wall."""
    took = step.seconds
    if took is not None and took > MAX_STEP_S:
        return f"it ran {took:.0f} s, over the {MAX_STEP_S:.0f} s a command may take to be re-run at a Stop"
    if remaining_s < cap_for(step):
        return f"the Stop's time budget had {max(remaining_s, 0):.0f} s left, less than its re-run's cap"
    if site is None:
        return "the wall cannot run here, and vacant never re-runs an agent's command unwalled"
    return None


def interactive(command: str) -> str | None:
    """The first program of the command line that reads a person at a terminal, if any (an
    editor, a pager, a REPL started with no arguments); None for a line it cannot read."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()\n")
        lexer.whitespace = " \t\r"
        words = list(lexer)
    except ValueError:
        return None
    for simple in _simple_commands(words):
        program, args = simple[0].rsplit("/", 1)[-1], simple[1:]
        if program in TERMINAL or (program in REPLS and not [a for a in args if not a.startswith("-")]):
            return program
        if program == "git" and args[:1] in (["rebase"], ["add"]) and {"-i", "-p", "--interactive"} & set(args):
            return "git " + args[0] + " -i"
    return None


def _simple_commands(words: list[str]) -> list[list[str]]:
    """The words of each simple command, without leading assignments and prefix programs."""
    commands: list[list[str]] = []
    current: list[str] = []
    for word in [*words, ";"]:
        if word in SEPARATORS:
            while current and ("=" in current[0] and not current[0].startswith("=") or current[0] in PREFIXES):
                current = current[1:]
            if current:
                commands.append(current)
            current = []
        else:
            current.append(word)
    return commands


def act(step: Step, command: str, root: Path) -> str | None:
    """Why the gate counts the command as ACT (or refuses it), by its rules now; None: it passes."""
    from vacant.policy.gate import gate, rules

    cwd = str(Path(root) / (step.cwd or "."))
    call = HookCall("tool_pre", "", Path(root), tool=step.tool, tool_input=step.input, cwd=cwd,
                    tool_kind="shell", intent={"command": command})
    try:
        verdict = gate.classify(Path(root), call, rules.load_policy(Path(root)))
    except Exception as error:  # noqa: BLE001 - as the gate itself: what cannot be classified is not run
        return f"the gate could not classify it ({type(error).__name__}), so vacant never runs it again"
    if verdict.kind == "pass":
        return None
    if verdict.kind == "act":
        may = "; ".join(hit.why for hit in verdict.action.hits)
        return f"the gate counts it as ACT (it may change {may}): vacant never runs it again"
    return "the gate refuses it, so vacant never runs it again"


def rerun(command: str, step: Step, before: Manifest, own: Iterable[str], store: ObjectStore, site: Site,
          rebuilt: Rebuilt) -> Rerun:
    """Run `command` behind the wall on the state `before` (rebuilt in `rebuilt`'s directory),
    shown at the workspace's path, in the step's directory; read back the paths `own`."""
    into = rebuilt.holding(before)
    cwd = into / (step.cwd or ".")
    cap = cap_for(step)
    started = time.monotonic()
    if not cwd.is_dir():
        return Rerun(127, False, 0.0, cap, {}, f"its directory {step.cwd} is not in the state before it")
    result = run_command(command, cwd, cap, into, site=dataclasses.replace(site, state=into.resolve()))
    return Rerun(result.exit_code, result.timed_out, time.monotonic() - started, cap,
                 entries_of(into, sorted(set(own)), store), result.output[-OUTPUT_KEPT:])


class Rebuilt(ReusedDirectory):
    """The re-runs' scratch directory: a recorded state rebuilt in it once, then put back after
    each re-run from what the re-run changed on disk (vacant/store/reuse.py)."""

    def holding(self, state: Manifest) -> Path:  # type: ignore[override]
        """The directory, holding exactly `state` (what the last re-run changed put back first)."""
        super().holding(state)
        return self.directory
