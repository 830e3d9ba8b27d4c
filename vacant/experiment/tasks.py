"""The task directory format of `vacant experiment`, its loader, and each task's content hash.

A tasks directory holds one sub-directory per task (its name is the task's id):

    NAME/task.toml        family = "programming"   (any word: results are reported per family)
    NAME/prompt.md        what the agent is asked (sent verbatim, with the plan's fixed suffix)
    NAME/vacant.toml      the contract the agent sees (copied into its workspace)
    NAME/seed/            the workspace the agent starts from (copied fresh for every attempt)
    NAME/hidden/checks.toml   held-back checks ([[check]] name/command, the contract's format)
    NAME/hidden/…         files those checks use

The hidden directory never enters an agent's workspace: after the run, the final workspace is
copied to a scratch directory, `hidden/` is copied beside it as `_hidden/`, and each hidden check
runs there (so `command = "python3 _hidden/test_x.py"`). A task's hash is SHA-256 over every file
of the task directory (relative path and bytes, in sorted order): the plan cites it, so an edited
task is a changed plan. Limits: symlinks in a task are refused; at most MAX_TASK_BYTES per task.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from vacant.policy.contract.contract import Contract, ContractError, parse_contract

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
MAX_TASK_BYTES = 20 * 1024 * 1024
HIDDEN_COPY = "_hidden"
RESERVED = {"vacant.toml", HIDDEN_COPY, ".vacant", ".git"}


class TaskError(ValueError):
    """A task directory is not in the format above (one sentence saying which file and why)."""


@dataclass(frozen=True)
class Task:
    name: str
    family: str
    path: Path
    prompt: str
    contract: Contract
    hidden: Contract
    hash: str  # sha256 of the whole task directory

    @property
    def seed(self) -> Path:
        return self.path / "seed"

    @property
    def hidden_dir(self) -> Path:
        return self.path / "hidden"


def task_files(path: Path) -> list[Path]:
    """Every file of a task, sorted; symlinks and oversize tasks are refused."""
    files, total = [], 0
    for item in sorted(path.rglob("*")):
        if item.is_symlink():
            raise TaskError(f"{item}: a symlink in a task (copy the file instead)")
        if item.is_file() and "__pycache__" not in item.parts:
            total += item.stat().st_size
            if total > MAX_TASK_BYTES:
                raise TaskError(f"{path}: more than {MAX_TASK_BYTES} bytes")
            files.append(item)
    return files


def content_hash(path: Path) -> str:
    digest = hashlib.sha256()
    for item in task_files(path):
        rel = item.relative_to(path).as_posix().encode()
        data = item.read_bytes()
        digest.update(b"%d:%s%d:" % (len(rel), rel, len(data)))
        digest.update(data)
    return digest.hexdigest()


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TaskError(f"{path}: missing") from None
    except (OSError, UnicodeDecodeError) as error:
        raise TaskError(f"{path}: unreadable ({error})") from None


def _contract(path: Path) -> Contract:
    try:
        return parse_contract(_read(path), str(path))
    except ContractError as error:
        raise TaskError(str(error)) from None


def load_task(path: Path) -> Task:
    path = Path(path)
    if not NAME.match(path.name):
        raise TaskError(f"{path}: a task's directory name is letters, digits, '.', '_' or '-' (at most 64)")
    try:
        meta = tomllib.loads(_read(path / "task.toml"))
    except tomllib.TOMLDecodeError as error:
        raise TaskError(f"{path / 'task.toml'}: {error}") from None
    family = meta.get("family")
    if not isinstance(family, str) or not NAME.match(family):
        raise TaskError(f"{path / 'task.toml'}: needs family = \"WORD\" (e.g. programming, general)")
    prompt = _read(path / "prompt.md").strip()
    if not prompt:
        raise TaskError(f"{path / 'prompt.md'}: empty")
    if not (path / "seed").is_dir():
        raise TaskError(f"{path / 'seed'}: missing (the workspace the agent starts from)")
    clash = sorted(n for n in RESERVED if (path / "seed" / n).exists())
    if clash:
        raise TaskError(f"{path / 'seed'}: holds {clash[0]}, which the experiment puts there itself")
    contract = _contract(path / "vacant.toml")
    if not contract.check:
        raise TaskError(f"{path / 'vacant.toml'}: no [[check]]: nothing could accept the work")
    hidden = _contract(path / "hidden" / "checks.toml")
    if not hidden.check:
        raise TaskError(f"{path / 'hidden' / 'checks.toml'}: no [[check]]")
    return Task(path.name, family, path.resolve(), prompt, contract, hidden, content_hash(path))


def load_tasks(tasks_dir: Path, only: list[str] | None = None) -> list[Task]:
    """Every task under `tasks_dir` (sorted by name), or the ones named in `only`."""
    tasks_dir = Path(tasks_dir)
    if not tasks_dir.is_dir():
        raise TaskError(f"{tasks_dir}: not a directory of tasks")
    names = sorted(p.name for p in tasks_dir.iterdir() if p.is_dir() and not p.name.startswith("."))
    if only:
        missing = sorted(set(only) - set(names))
        if missing:
            raise TaskError(f"{tasks_dir}: no task named {missing[0]}")
        names = [n for n in names if n in set(only)]
    if not names:
        raise TaskError(f"{tasks_dir}: holds no task directory")
    return [load_task(tasks_dir / name) for name in names]
