"""The wall's seal: what a platform's own sandbox cannot hold, checked at every pre-tool call.

Claude Code's and Codex's sandboxes keep each hook settings file read-only, but not the directory
holding it, nor `.git` itself: `mv .claude x` and a fresh `.claude/settings.local.json` dropped
vacant's hooks and Claude's sandbox settings together; `mv .git g` with a `gitdir: g` file in its
place uncovered the state directory. And a settings file that did not exist when the wall went up
(say `.qwen/settings.json` in a Claude workspace) is not a mount the sandbox can hold without
making its whole missing directory read-only (which broke `mkdir -p .github/workflows`), so the
wall leaves it out and the seal watches for it instead.

`vacant init` records the seal in the install record (`seal`): for `.git` and every directory
between the workspace root and a platform's hook settings file (`.claude`, `.github/hooks`, …),
its kind, device and inode, or None when absent; for each settings file, whether it exists. At a
pre-tool call `broken` compares: a directory that existed must be the same one (a rename and a
fresh one in its place is another inode; a directory that appears since is fine: `mkdir -p
.github/workflows`); a settings file that existed must still exist, and one that did not must
not have appeared (a planted hook of another platform). The first difference is named, and the
call is denied until the person accepts it (`vacant init` again). Cost: one `lstat` per entry.

Not covered: a settings file edited in place (the sandboxes hold the files themselves read-only),
and anything outside the workspace (the sandboxes keep it read-only). Stdlib only (hot path).
"""

from __future__ import annotations

import os

GIT = ".git"


def entries(settings_in_workspace: list[str] | tuple[str, ...]) -> tuple[list[str], list[str]]:
    """(directories, files) the seal covers, relative to the workspace root."""
    directories, files = [GIT], []
    for rel in settings_in_workspace:
        parts = rel.split("/")
        for depth in range(1, len(parts)):
            parent = "/".join(parts[:depth])
            if parent not in directories:
                directories.append(parent)
        if rel not in files:
            files.append(rel)
    return directories, files


def stamp(path: str) -> list[object] | None:
    """A directory's or file's identity: [kind, device, inode], None when absent."""
    try:
        found = os.lstat(path)
    except OSError:
        return None
    kind = "d" if os.path.isdir(path) and not os.path.islink(path) else ("l" if os.path.islink(path) else "f")
    return [kind, found.st_dev, found.st_ino]


def take(root: str | os.PathLike[str], settings_in_workspace: list[str] | tuple[str, ...]) -> dict[str, object]:
    """The seal of the workspace as it is now (what `vacant init` records)."""
    directories, files = entries(settings_in_workspace)
    base = os.fspath(root)
    return {"directories": {rel: stamp(os.path.join(base, rel)) for rel in directories},
            "files": {rel: os.path.lexists(os.path.join(base, rel)) for rel in files}}


def broken(root: str | os.PathLike[str], seal: object) -> str | None:
    """What changed since the seal was taken, in one sentence, or None (no seal recorded: None)."""
    if not isinstance(seal, dict):
        return None
    base = os.fspath(root)
    directories = _table(seal, "directories")
    for rel, was in directories.items():
        if was is None:
            continue  # made since: a directory of the agent's work (`mkdir -p .github/workflows`)
        now = stamp(os.path.join(base, rel))
        if not isinstance(was, list) or now != was:
            return _moved(rel, now)
    files = _table(seal, "files")
    for rel, existed in files.items():
        exists = os.path.lexists(os.path.join(base, rel))
        if exists != bool(existed):
            return (f"{rel} appeared (a platform's hook settings that were not there when the wall went up)"
                    if exists else f"{rel} is gone (hook settings the wall was holding)")
    return None


def _table(seal: dict[str, object], key: str) -> dict[str, object]:
    table = seal.get(key)
    return table if isinstance(table, dict) else {}


def _moved(rel: str, now: list[object] | None) -> str:
    if now is None:
        return f"{rel} is gone (moved or deleted since the wall went up)"
    if now[0] != "d":
        return f"{rel} is no longer a directory (a {'link' if now[0] == 'l' else 'file'} stands in its place)"
    return f"{rel} is another directory than when the wall went up (moved away and replaced)"


def reseal(root: str | os.PathLike[str]) -> None:
    """Take the seal again into the install record (the person's own act: `vacant init`,
    `uninstall`, and `vacant do` around the settings its driver writes and removes)."""
    from pathlib import Path

    from vacant.core.locations import read_install, write_install
    from vacant.core.platform_facts import settings_paths

    record = read_install(Path(root))
    if record is None:
        return
    record["seal"] = take(root, settings_paths()[0])
    write_install(Path(root), record)
