"""A file vacant writes whole and owns (OpenCode's plugin, pi's extension): written only over a
file that bears vacant's mark, the directories the first install created remembered in the user
data dir, and removed again (with those directories, when empty) at uninstall. Doctor's check of
the hook command such a file runs is here too.

Install and doctor time only: never on a hook call.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from vacant.core.atomic import atomic_write
from vacant.core.locations import user_data_dir
from vacant.platforms import settings_file
from vacant.platforms.base import Diagnosis, diagnosis


def record_path(platform: str, path: Path) -> Path:
    """Where the install of `path` remembers the directories it created."""
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:24]
    return user_data_dir() / "installs" / f"{platform}-{digest}.json"


def write(platform: str, path: Path, text: str, mark: str, what: str) -> bool:
    """Write `text` (holding `mark`) at `path`; False when the same text is already there.
    Refuses to replace a file without the mark (`what` names it in the error)."""
    if path.exists():
        current = path.read_text(errors="replace")
        if mark not in current:
            raise settings_file.InstallError(f"{path} exists and is not vacant's {what}; move it away first")
        if current == text:
            return False
    created = [str(directory) for directory in (path.parent.parent, path.parent) if not directory.exists()]
    path.parent.mkdir(parents=True, exist_ok=True)
    record = record_path(platform, path)
    if not record.exists():
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps({what: str(path), "created_dirs": created}))
    atomic_write(path, text)
    return True


def remove(platform: str, path: Path, mark: str) -> bool:
    """Remove the file when it bears the mark, and the directories its install created when they
    are empty (the platform or the person may have put files there since)."""
    record = record_path(platform, path)
    try:
        created = json.loads(record.read_text()).get("created_dirs", [])
    except (OSError, ValueError, AttributeError):
        created = []
    removed = False
    if path.exists() and mark in path.read_text(errors="replace"):
        path.unlink()
        removed = True
    for directory in reversed(created):
        try:
            Path(directory).rmdir()  # only when empty
        except OSError:
            pass
    if record.exists():
        record.unlink()
    return removed


def command_check(platform: str, scope: str, path: Path, text: str) -> tuple[Diagnosis, str | None]:
    """Doctor's line for the hook command the file runs, and that command (None: it runs another,
    or one that cannot start)."""
    runs = [command for form in ("local", "project")
            if json.dumps(command := settings_file.hook_command(platform, form)) in text]
    problem = settings_file.command_problem(runs[0]) if runs else "it runs another hook command"
    line = diagnosis(str(path), problem is None, f"runs {runs[0]}" if problem is None else
                     f"{problem}: run `vacant init --platform {platform} --scope {scope}` again")
    return line, runs[0] if problem is None else None
