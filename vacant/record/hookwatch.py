"""Noticing that vacant's hooks vanished while a run goes on (`git clean -fdx`, `git stash -u`,
a deleted settings file).

The install record (vacant.core.locations) names the file each platform's hooks were written to.
While the platform still calls the hooks it loaded at start-up, each call checks that file: when it
no longer holds exactly the entries `vacant init` wrote (their digest in the install record,
vacant/core/installcheck.py: the whole entry, matcher included, never a substring test), the run
records `hooks_missing` once and the person is told
(a system message). When the platform stops calling hooks altogether, `vacant doctor` says so.
Stdlib only (hot path): one lstat and one bounded read per call.
"""

from __future__ import annotations

import os
import stat

from vacant.core.installcheck import entry_intact

MARK = b"vacant-hook"  # in every installed hook command (vacant.platforms.settings_file.hook_command)
READ_CAP = 4 << 20  # a settings file is small; a bigger one is read only this far


def hooks_present(path: str) -> bool:
    """Whether the file at `path` still holds vacant's hook command (never follows a FIFO/device)."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            return False
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except (OSError, ValueError, TypeError):
        return False
    try:
        return MARK in os.read(fd, READ_CAP)
    except OSError:
        return False
    finally:
        os.close(fd)


def missing_hooks(record: dict | None, platform: str) -> str | None:
    """The settings file that should hold `platform`'s hooks exactly as installed and no longer does."""
    entry = ((record or {}).get("hooks") or {}).get(platform)
    if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
        return None
    return None if entry_intact(entry) else entry["path"]


def message(platform: str, path: str) -> str:
    return (f"vacant: the {platform} hooks installed in {path} are gone or changed (deleted, cleaned or edited) "
            "during this run; "
            f"recording stops when the agent reloads its settings. Run `vacant init --platform {platform}` again.")
