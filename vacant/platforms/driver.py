"""What a `vacant do` driver is: one platform's way of getting its hooks into one run of the
agent without touching a settings file, and of continuing a session with feedback.

Each platform module defines its driver next to its payload parser (the protocol's `driver`);
`vacant do` (vacant/do/) runs the rounds. Stdlib only and no dataclasses or typing: platform
modules import this on the hook's hot path.
"""

from __future__ import annotations

from vacant.core import leanjson as json  # json without `import json` (hot path)
import os
from pathlib import Path


class DoError(RuntimeError):
    """`vacant do` cannot run as asked (one sentence saying what to do)."""


# -- command lines -------------------------------------------------------------------------------


class Parsed:
    """A command line split the way the agent's own parser splits it: every option with its
    token(s) and values, in order; the positionals; option -> values given."""

    __slots__ = ("options", "positionals", "values")

    def __init__(self, options: list[list[str]], positionals: list[str]) -> None:
        self.options = options
        self.positionals = positionals
        self.values: dict[str, list[str | None]] = {}

    def value(self, *names: str) -> str | None:
        for name in names:
            for value in self.values.get(name, []):
                if value is not None:
                    return value
        return None

    def has(self, *names: str) -> bool:
        return any(name in self.values for name in names)


def parse_args(tokens: list[str], value_opts: set[str], variadic: set[str] | frozenset[str] = frozenset(),
               optional: set[str] | frozenset[str] = frozenset()) -> Parsed:
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


def without(parsed: Parsed, names: set[str]) -> list[str]:
    """The option tokens, minus the options named (with their values)."""
    out: list[str] = []
    for taken in parsed.options:
        if taken[0].partition("=")[0] not in names:
            out += taken
    return out


# -- drivers ---------------------------------------------------------------------------------------


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
        self.wall = None  # vacant/core/wall.py Wall: set by `vacant do` unless --no-wall

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

    def before_start(self) -> None:
        """Just before each round's process starts (a watcher takes its baseline here)."""

    def close(self) -> None:
        """After the last round, whatever happened: release what `prepare` or a round started."""


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
