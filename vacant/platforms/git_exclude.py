"""The workspace's `.git/info/exclude` lines a platform's sandbox needs so that everyday git works
behind the wall and git shows nothing vacant or the sandbox put in the workspace.

Claude Code's sandbox (measured on the pinned 2.1.197) binds `/dev/null` over each protected path
missing from the workspace (`.bashrc`, `.gitconfig`, `.mcp.json`, `.vscode`, `.claude/hooks`, …)
while a command runs: `git add -A` then stops at the first character device (`can only add regular
files`, exit 128). An excluded path is never added, so `git add -A` passes them by. The same block
keeps the per-machine settings vacant writes into the workspace (which hold this machine's paths)
out of `git add -A` and `git status`. `.git/info/exclude` is git's own, per clone, and never
committed: nothing the person or a collaborator sees in the tree changes.

Only names missing at `vacant init` are excluded (an existing path is bound as it is, never
replaced); a name that is a directory at init is left to git. A directory made later under a
name excluded here is still seen (`!/<name>/`); a file made under one is seen again from the next
Stop, which drops the placeholder lines of paths made for real since (`refresh`: until then a
`git status` leaves it out). The lines are one marked block per platform; the file's bytes before
the first install are kept with vacant's install records, so that an uninstall with nothing else
changed restores them byte for byte. Install time and the Stop only.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path
from typing import NamedTuple

from vacant.core.atomic import atomic_write
from vacant.core.locations import user_data_dir
from vacant.core.sha import sha256

def begin(owner: str) -> str:
    return f"# >>> vacant ({owner}): written by `vacant init`, removed by `vacant uninstall` >>>\n"


def end(owner: str) -> str:
    return f"# <<< vacant ({owner}) <<<\n"


class Clone(NamedTuple):
    exclude: Path  # the clone's info/exclude (a worktree's is its main clone's)
    prefix: str  # the workspace's path below the clone's top, "" or ending in "/"


def clone_of(root: Path) -> Clone | None:
    """The git clone holding `root`, or None outside one."""
    try:
        out = subprocess.run(["git", "rev-parse", "--show-prefix", "--git-path", "info/exclude"], cwd=root,
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = out.stdout.splitlines()
    if out.returncode != 0 or len(lines) != 2:
        return None
    return Clone((Path(root) / lines[1]).resolve(), lines[0])


def lines_for(root: Path, names: tuple[str, ...], directories: tuple[str, ...] = ()) -> list[str]:
    """The exclude lines for `names` (workspace-relative) missing at `root` now; for each of
    `directories`, a real directory made later under that name is still seen."""
    lines = []
    for name in names:
        if os.path.lexists(Path(root) / name):
            continue
        lines.append(f"/{name}")
        if name in directories:
            lines.append(f"!/{name}/")
    return lines


def _below(prefix: str, line: str) -> str:
    """`line` (anchored at the workspace) anchored at the clone's top."""
    negated = line.startswith("!")
    return ("!" if negated else "") + "/" + prefix + line.lstrip("!").lstrip("/")


def strip(text: str, owner: str) -> str:
    """The text without `owner`'s marked block."""
    out, skipping = [], False
    for line in text.splitlines(keepends=True):
        if line == begin(owner):
            skipping = True
        elif skipping and line == end(owner):
            skipping = False
        elif not skipping:
            out.append(line)
    return "".join(out)


def _record(path: Path, owner: str) -> Path:
    digest = sha256(f"{path}\0{owner}".encode()).hexdigest()[:24]
    return user_data_dir() / "installs" / f"git-exclude-{digest}.json"


def _read(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        return None


def _write(path: Path, text: str) -> None:
    atomic_write(path, text.encode("utf-8", "surrogateescape"))


PLACEHOLDERS = "# the sandbox's placeholders: each line goes once its path is made for real\n"


def install(root: Path, owner: str, lines: list[str], placeholders: list[str] | None = None) -> Path | None:
    """Put `lines` (vacant's own files) and `placeholders` (a sandbox's, for paths missing now: each
    dropped by `refresh` once made for real) into the clone's exclude file as `owner`'s block (a
    platform's: replacing its earlier one); returns the file, or None where there is no git clone
    or nothing to exclude."""
    clone = clone_of(root)
    if clone is None:
        return None
    lines = [_below(clone.prefix, line) for line in lines]
    if placeholders:
        lines += [PLACEHOLDERS.rstrip("\n"), *(_below(clone.prefix, line) for line in placeholders)]
    path = clone.exclude
    current = _read(path)
    base = strip(current or "", owner)
    record = _record(path, owner)
    if not record.exists():
        record.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(record, json.dumps({"path": str(path), "original": current}))
    if not lines:
        text = base
    else:
        joined = base if not base or base.endswith("\n") else base + "\n"
        text = joined + begin(owner) + "".join(f"{line}\n" for line in lines) + end(owner)
    if text != (current or ""):
        path.parent.mkdir(parents=True, exist_ok=True)
        _write(path, text)
    return path


def uninstall(root: Path, owner: str) -> Path | None:
    """Take `owner`'s block out; the file's original bytes back when nothing else changed."""
    clone = clone_of(root)
    if clone is None:
        return None
    path = clone.exclude
    record = _record(path, owner)
    current = _read(path)
    try:
        saved = json.loads(record.read_text())
    except (OSError, ValueError):
        saved = None
    record.unlink(missing_ok=True)
    if current is None or begin(owner) not in current:
        return None
    stripped = strip(current, owner)
    original = (saved or {}).get("original")
    if saved is not None and stripped.rstrip("\n") == (original or "").rstrip("\n"):
        if original is None:
            path.unlink()
        else:
            _write(path, original)
    else:
        _write(path, stripped)
    return path


def refresh(root: Path) -> list[str]:
    """Drop from every vacant block the placeholder lines whose path the person (or the agent) has
    since made for real: a file or directory git must see again (`.mcp.json`, a project's
    `.claude/settings.json`). A character device is the sandbox's own placeholder, never real.
    Returns the lines dropped. Run at each Stop, outside the sandbox."""
    clone = clone_of(root)
    current = _read(clone.exclude) if clone is not None else None
    if clone is None or current is None or PLACEHOLDERS not in current:
        return []
    kept, dropped, placeholders = [], [], False
    for line in current.splitlines(keepends=True):
        if line == PLACEHOLDERS:
            placeholders = True
        elif line.startswith("# <<< vacant ("):
            placeholders = False
        elif placeholders and _made_for_real(root, clone.prefix, line.strip()):
            dropped.append(line.strip())
            continue
        kept.append(line)
    if dropped:
        _write(clone.exclude, "".join(kept))
    return dropped


def _made_for_real(root: Path, prefix: str, line: str) -> bool:
    name = line.lstrip("!").strip("/")
    if not name.startswith(prefix):
        return False
    try:
        info = os.lstat(Path(root) / name[len(prefix):])
    except OSError:
        return False
    return not stat.S_ISCHR(info.st_mode)

