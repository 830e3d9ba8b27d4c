"""Where a workspace's root and its `.vacant/` state live. Stdlib only (hot path)."""

from __future__ import annotations

import os
import re
from pathlib import Path

STATE_DIR_NAME = ".vacant"
SKIP_NAMES = (".git", STATE_DIR_NAME)


class WorkspaceError(RuntimeError):
    """A user-facing problem locating the workspace (one sentence saying what to do)."""


def find_root(start: Path | None = None) -> Path:
    """The nearest ancestor holding `.vacant/`, else the git top level, else `start` itself."""
    start = Path(start or os.getcwd()).resolve()
    for candidate in (start, *start.parents):
        if (candidate / STATE_DIR_NAME).is_dir():
            return candidate
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return start


def new_root(start: Path | None = None) -> Path:
    """Where `vacant init` puts a workspace: the git top level, else the directory itself (never
    an ancestor that happens to hold a `.vacant/`)."""
    start = Path(start or os.getcwd()).resolve()
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return start


def state_dir(root: Path) -> Path:
    override = os.environ.get("VACANT_STATE_DIR")
    return Path(override).resolve() if override else Path(root) / STATE_DIR_NAME


def ensure_state_dir(root: Path) -> Path:
    """Create `.vacant/` with a `.gitignore` of `*` so nothing of it is ever committed."""
    directory = state_dir(root)
    (directory / "runs").mkdir(parents=True, exist_ok=True)
    (directory / "objects").mkdir(exist_ok=True)
    ignore = directory / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n")
    return directory


def runs_dir(root: Path) -> Path:
    return state_dir(root) / "runs"


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def run_dir(root: Path, run_id: str) -> Path:
    safe = _UNSAFE.sub("_", run_id).lstrip(".") or "run"
    return runs_dir(root) / safe


def list_runs(root: Path) -> list[Path]:
    """Run directories, oldest first (by the log's creation order on disk)."""
    base = runs_dir(root)
    if not base.is_dir():
        return []
    found = [entry for entry in base.iterdir() if (entry / "events.jsonl").exists()]
    return sorted(found, key=lambda entry: ((entry / "events.jsonl").stat().st_ctime_ns, entry.name))


def resolve_run(root: Path, run: str | None) -> Path:
    """A run by id or unique prefix; the latest when `run` is None."""
    runs = list_runs(root)
    if not runs:
        raise WorkspaceError(f"no runs recorded under {runs_dir(root)}: record one first (vacant demo, or an agent with vacant's hooks)")
    if run is None:
        return runs[-1]
    matches = [entry for entry in runs if entry.name == run] or [
        entry for entry in runs if entry.name.startswith(run)
    ]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise WorkspaceError(f"no run named {run!r}: `vacant runs` lists them")
    raise WorkspaceError(f"{run!r} names {len(matches)} runs: give more of the id")

def user_data_dir() -> Path:
    """Reputation table, install backups: $VACANT_HOME, else $XDG_DATA_HOME/vacant."""
    override = os.environ.get("VACANT_HOME")
    if override:
        return Path(override)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "vacant"


def user_config_dir() -> Path:
    """The signing key lives here: $XDG_CONFIG_HOME/vacant (default ~/.config/vacant)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "vacant"
