"""What `vacant init` and `vacant uninstall` touched, file by file, wherever it is.

A platform names every file its install may write, in every scope (`Platform.files`), inside the
workspace or not (Claude's user settings, Codex's `config.toml` trust entries). Before and after
the command, each of those files, its directories and vacant's own install records are
snapshotted (and the clone's `.git/info/exclude`, where an install keeps git from
seeing what it and a platform's sandbox put in the workspace); the difference is what the command prints. Directories an install created are
remembered in the user data directory, so that an uninstall removes them again when they are left
empty (never a directory vacant did not create, never one with anything in it).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import NamedTuple

from vacant.core.atomic import atomic_write
from vacant.core.tally import tally_path
from vacant.core.locations import state_dir, user_config_dir, user_data_dir


class Change(NamedTuple):
    action: str  # created | changed | removed
    path: str
    kind: str  # file | directory


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir" if path.is_dir() else None
    except OSError:
        return "unreadable"


def candidates(root: Path, files: list[Path]) -> list[Path]:
    """The files, up to two directory levels above each, the state directory, the clone's
    `.git/info/exclude` (vacant/platforms/git_exclude.py), and vacant's install records."""
    from vacant.platforms.git_exclude import clone_of

    found: set[Path] = set()
    clone = clone_of(root)
    if clone is not None:
        found.add(clone.exclude)
    for path in files:
        found.add(path)
        found.update(list(path.parents)[:2])
    found.add(state_dir(root))
    record_tally = Path(tally_path(root))  # next to the key: what each hook call checks the record against
    found.update((record_tally, record_tally.with_name(f"{record_tally.name}.lock"), record_tally.parent))
    installs = user_data_dir() / "installs"
    found.add(installs)
    if installs.is_dir():
        found.update(installs.iterdir())
    return sorted(found)


def snapshot(paths: list[Path]) -> dict[Path, str | None]:
    return {path: _digest(path) for path in paths}


def changes(before: dict[Path, str | None], after_paths: list[Path]) -> list[Change]:
    after = snapshot(sorted(set(before) | set(after_paths)))
    out = []
    for path in sorted(after):
        old, new = before.get(path), after[path]
        if old == new:
            continue
        kind = "directory" if "dir" in (old, new) else "file"
        action = "created" if old is None else "removed" if new is None else "changed"
        out.append(Change(action, str(path), kind))
    return out


def _record(root: Path) -> Path:
    digest = hashlib.sha256(str(Path(root).resolve()).encode()).hexdigest()[:16]
    return user_data_dir() / "installs" / f"dirs-{digest}.json"


def remember_created_dirs(root: Path, done: list[Change]) -> None:
    # vacant's own directories (its data, and its configuration: the key and the record's tally
    # anchors, which outlive an uninstall) are not the person's to clean
    ours = (state_dir(root), user_data_dir(), user_config_dir())
    created = [c.path for c in done if c.action == "created" and c.kind == "directory"
               and not any(Path(c.path) == d or d in Path(c.path).parents for d in ours)]
    if not created:
        return
    record = _record(root)
    known = json.loads(record.read_text()) if record.exists() else []
    record.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(record, json.dumps(sorted(set(known) | set(created))))


def remove_created_dirs(root: Path) -> list[Change]:
    """Directories an install created and that are empty now, removed (deepest first)."""
    record = _record(root)
    if not record.exists():
        return []
    removed, kept = [], []
    for directory in sorted(json.loads(record.read_text()), key=lambda d: -len(Path(d).parts)):
        try:
            Path(directory).rmdir()  # only when empty
            removed.append(Change("removed", directory, "directory"))
        except FileNotFoundError:
            continue
        except OSError:
            kept.append(directory)
    if kept:
        atomic_write(record, json.dumps(kept))
    else:
        record.unlink()
    return removed


def render(done: list[Change]) -> list[str]:
    return [f"  {c.action:<8} {c.path}{'/' if c.kind == 'directory' else ''}" for c in done]
