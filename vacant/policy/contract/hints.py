"""Hints: active deterministic checks that point at something worth a look. They never block.

- `unsourced_number`: a number in a text deliverable that appears in no pinned input, no read
  the run observed, and not in the deliverable as it was when the run began.
- `unhandled_failed_command`: a shell step that failed and that no later step re-ran
  successfully (the same command, or the same program: `pytest -q` then `pytest -q tests/x.py`).

Both are off for deliverables that are not text (binary or not UTF-8). Every hint says it is one.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import asdict, dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from vacant.core.locations import state_dir
from vacant.store.objects import ObjectStore

if TYPE_CHECKING:  # pragma: no cover
    from vacant.policy.contract.contract import Contract
    from vacant.store.run import RunView, Step

KINDS = ("unsourced_number", "unhandled_failed_command")
PREFIX = "hint (never blocks): "
MAX_SOURCE_BYTES = 64 * 1024 * 1024

# A number: not glued to a word or to another number (`v1.2`, `0x1F`, `1.2.3` are not numbers).
_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\w]|\.\d)")
_QUERY_TOOLS = {"grep", "egrep", "fgrep", "rg", "ag", "diff", "cmp", "test", "[", "[[", "which", "type", "command", "pgrep"}
_PY = {"python", "python3", "py"}
_RUNNERS = {"uv", "npm", "npx", "pnpm", "yarn", "poetry", "pipenv", "cargo", "go", "make", "git", "pip", "pip3",
            "docker", "bun", "deno", "dotnet", "mvn", "gradle", "bundle", "rake"}


@dataclass
class Hint:
    kind: str
    message: str  # starts with "hint (never blocks): "
    path: str | None = None
    line: int | None = None
    col: int | None = None
    step: int | None = None
    value: str | None = None  # the number, or the command

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "hint": True, "blocks": False}

    @property
    def where(self) -> str:
        if self.path:
            return f"{self.path}:{self.line}" + (f":{self.col}" if self.col else "")
        return f"step {self.step}" if self.step is not None else ""


# -- unsourced_number ------------------------------------------------------------------------------


def _norm(digits: str) -> str | None:
    try:
        return format(Decimal(digits).normalize(), "f")
    except InvalidOperation:
        return None


def _trivial(key: str) -> bool:
    """Single-digit integers (list markers, indices, 0/1) say nothing about where a value came from."""
    return "." not in key and len(key.lstrip("-")) == 1


def numbers(text: str) -> Iterator[tuple[int, str, list[set[str]]]]:
    """(offset, the token as written, alternatives: each a set of normal forms that must all be known).

    `1,234` reads as one thousand two hundred thirty-four, or as the two fields 1 and 234 (CSV):
    either reading being sourced is enough.
    """
    for match in _NUMBER.finditer(text):
        whole, fraction = match.group(1), match.group(2) or ""
        joined = _norm(whole.replace(",", "") + fraction)
        readings = [{joined} if joined else set()]
        if "," in whole:
            parts = whole.split(",")
            parts[-1] += fraction
            readings.append({form for part in parts if (form := _norm(part)) and not _trivial(form)})
        yield match.start(), match.group(0), readings


def _known_numbers(text: str, into: set[str]) -> None:
    for _offset, _token, readings in numbers(text):
        for reading in readings:
            into.update(reading)


def _decode_text(data: bytes) -> str | None:
    """Text, or None for content that is not text (binary, not UTF-8): the hint is off for it."""
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _store(root: Path) -> ObjectStore:
    return ObjectStore(state_dir(root) / "objects")


def _blob(store: ObjectStore, key: Any) -> bytes | None:
    if not isinstance(key, str) or not key:
        return None
    try:
        return store.get(key)
    except OSError:
        return None


def _baseline(store: ObjectStore, view: "RunView") -> dict[str, Any]:
    from vacant.store.states import load_manifest

    starts = view.of_type("run_start")
    if not starts:
        return {}
    try:
        return load_manifest(store, starts[0]["baseline"])
    except (OSError, ValueError, KeyError):
        return {}


def unsourced_number(root: Path, view: "RunView | None", contract: "Contract | None") -> list[Hint]:
    """Numbers in text deliverables found in no pinned input, no observed read, and not at baseline."""
    from vacant.policy.contract.globs import matches

    if contract is None or not contract.deliverables:
        return []
    root = Path(root)
    pinned = set(matches(root, contract.pinned))
    deliverables = [rel for rel in matches(root, contract.deliverables) if rel not in pinned]
    if not deliverables:
        return []
    known: set[str] = set()
    for rel in pinned:
        try:
            data = (root / rel).read_bytes()[:MAX_SOURCE_BYTES]
        except OSError:
            continue
        _known_numbers(data.decode("utf-8", errors="replace"), known)
    store = _store(root)
    baseline: dict[str, Any] = {}
    if view is not None:
        for read in view.of_type("read"):
            data = _blob(store, read.get("object"))
            if data is not None:
                _known_numbers(data.decode("utf-8", errors="replace"), known)
        baseline = _baseline(store, view)
    hints: list[Hint] = []
    for rel in deliverables:
        try:
            text = _decode_text((root / rel).read_bytes())
        except OSError:
            continue
        if text is None:
            continue  # not text: off
        own = set(known)
        entry = baseline.get(rel)
        if isinstance(entry, list) and len(entry) >= 4 and entry[0] == "f":
            before = _blob(store, entry[3])
            if before is not None:
                _known_numbers(before.decode("utf-8", errors="replace"), own)
        reported: set[str] = set()
        for number, line in enumerate(text.split("\n"), start=1):
            for offset, token, readings in numbers(line):
                main = next(iter(readings[0]), None)
                if main is None or main in reported or _trivial(main):
                    continue
                if any(reading and reading <= own for reading in readings):
                    continue
                reported.add(main)
                hints.append(Hint(
                    kind="unsourced_number",
                    message=f"{PREFIX}the number {token} in {rel}:{number} appears in no pinned input and in no "
                            "read this run observed: check where it came from",
                    path=rel, line=number, col=offset + 1, value=token,
                ))
    return hints


# -- unhandled_failed_command ----------------------------------------------------------------------


def shell_command(step: "Step") -> str | None:
    """The command line of a shell step (Claude's Bash, a Codex shell call), else None."""
    if step.out_of_band or not isinstance(step.input, dict):
        return None
    command = step.input.get("command", step.input.get("cmd"))
    if isinstance(command, list) and all(isinstance(part, str) for part in command):
        if len(command) >= 3 and command[0] in ("bash", "sh", "zsh") and command[1] in ("-c", "-lc"):
            return command[2]
        return shlex.join(command)
    return command if isinstance(command, str) and command.strip() else None


def _failed(step: "Step") -> bool:
    return step.outcome == "failed" or (step.exit_code is not None and step.exit_code != 0)


def _succeeded(step: "Step") -> bool:
    return step.outcome == "ok" and step.exit_code in (None, 0)


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def program_key(command: str) -> str:
    """What a command runs, ignoring its arguments: `pytest`, `python -m pytest`, `npm test`."""
    words = _words(command)
    while words and "&&" in words and words[0] == "cd":  # `cd sub && pytest`
        words = words[words.index("&&") + 1 :]
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):  # FOO=1 pytest
        words = words[1:]
    if words and words[0] in ("timeout", "time", "nice", "env") and len(words) > 1:
        words = words[2:] if words[0] == "timeout" else words[1:]
    if not words:
        return command.strip()
    program = words[0].rsplit("/", 1)[-1]
    if program in _PY and len(words) > 2 and words[1] == "-m":
        return f"{program} -m {words[2]}"
    if program in _RUNNERS and len(words) > 1:
        return f"{program} {words[1]}"
    return program


def _normal(command: str) -> str:
    return " ".join(command.split())


def unhandled_failed_command(view: "RunView") -> list[Hint]:
    """Failed shell steps that no later step re-ran successfully; one hint per command."""
    steps = [(step, command) for step in view.ordered() if (command := shell_command(step)) is not None]
    hints: dict[str, Hint] = {}
    failures: dict[str, int] = {}
    for index, (step, command) in enumerate(steps):
        if not _failed(step):
            continue
        key = program_key(command)
        if key in _QUERY_TOOLS and step.exit_code == 1:
            continue  # grep found nothing, diff found a difference: an answer, not a failure
        later = steps[index + 1 :]
        if any(_succeeded(other) and (_normal(cmd) == _normal(command) or program_key(cmd) == key) for other, cmd in later):
            continue
        label = _normal(command)
        failures[label] = failures.get(label, 0) + 1
        shown = label if len(label) <= 80 else label[:79] + "…"
        exit_text = f"exited {step.exit_code}" if step.exit_code is not None else "failed"
        times = f" (it failed {failures[label]} times)" if failures[label] > 1 else ""
        hints[label] = Hint(  # the last failure of the same command stands for all of them
            kind="unhandled_failed_command",
            message=f"{PREFIX}step {step.number} ({step.tool} `{shown}`) {exit_text}{times} and no later step "
                    "re-ran it successfully",
            step=step.number, value=command,
        )
    return sorted(hints.values(), key=lambda hint: hint.step or 0)


def all_hints(root: Path, view: "RunView | None", contract: "Contract | None") -> list[Hint]:
    found = unsourced_number(root, view, contract)
    if view is not None:
        found += unhandled_failed_command(view)
    return found
