"""The walled runner's command line: a command behind the wall, at the workspace's own path.

Everything vacant runs that the agent could have written (the guards and checks at Stop, their
replays on recorded states, `vacant check`, `vacant do`'s command) goes through `wrap`, which
returns the bubblewrap command line for one of two placements:

* the live workspace (`Placement(root)`): the workspace writable at its path, as the agent's own
  commands have it;
* a rebuilt state (`Placement(root, state=DIR, unrecorded=...)`): the scratch directory DIR bound
  over the workspace's path in a private mount namespace, so that whatever reaches the workspace
  by absolute path (an editable install's `.pth` or `__editable__` finder, an egg-link, a venv
  inside the workspace, npm/pnpm workspace links, a Go `replace`, PYTHONPATH or NODE_PATH naming
  it, a config holding absolute paths) reaches the state instead. The live paths the state does
  not record (ignored or excluded: `.git`, a `.venv`, `node_modules`, build outputs) are bound
  read-only over it from the live workspace, so the command sees them as a check in the
  workspace would; nothing of the live workspace is writable.

Either way, as for the agent's commands (core/wall.py): the wall's hidden paths are empty (a
tmpfs over a directory, /dev/null over a file), the rest of the file system read-only, the hook
settings and git's hooks and config read-only even inside a writable workspace (and `.git` and
the settings directories there mount points, which cannot be renamed away), a TMPDIR of the
run's own, a pid namespace of its own (nothing the command starts outlives it, `--die-with-parent`)
and a session of its own (no TIOCSTI into the person's terminal). No network unless the placement
allows it (`--unshare-net`: a loopback interface only).

Paths are mounted after the fresh /dev, so a workspace or a scratch directory on a tmpfs under
/dev/shm stays visible. `usable()` says whether bubblewrap runs here at all (the package, and
unprivileged user namespaces); where it does not, callers run the command as before and say the
checks ran unwalled. Stdlib only.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vacant.core.wall import Wall, inside

WALLED_MARK = "VACANT_WALLED"  # set inside: a check may tell it runs behind the wall (never trusted by a hook)
NOT_UNDER_STATE = ("__pycache__",)  # bytecode caches of the live sources: never brought over a state


@dataclass(frozen=True)
class Placement:
    """Where a command runs: `root` is the workspace's path as the command sees it; `state` the
    host directory holding a rebuilt state shown there (None: the live workspace itself);
    `unrecorded` the live paths (relative to root) brought read-only over the state."""

    root: Path
    state: Path | None = None
    unrecorded: tuple[str, ...] = ()
    network: bool = False

    def host(self, path: str) -> str:
        """Where a path the command sees lies on the host (inside the state, for a rebuilt one)."""
        if self.state is not None and inside(path, str(self.root)):
            return str(self.state) + path[len(str(self.root)):]
        return path


def wrap(argv: list[str], placement: Placement, wall: Wall, tmpdir: Path, cwd: Path | None = None,
         writable: tuple[Path, ...] = (), bwrap: str | None = None, new_session: bool = True) -> list[str]:
    """The bubblewrap command line running `argv` in `placement` behind `wall`, in `cwd` (a path
    as the command sees it; default the root), with `tmpdir` (the run's own) as TMPDIR and the
    `writable` host directories writable at their own paths."""
    root = str(placement.root)
    out = [bwrap or bwrap_path(), "--die-with-parent", "--unshare-pid"]
    if new_session:
        out.append("--new-session")  # no TIOCSTI into the person's terminal
    if not placement.network:
        out.append("--unshare-net")
    out += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    if placement.state is None:
        out += ["--bind", root, root]
    else:
        out += ["--bind", str(placement.state), root]
        for rel in placement.unrecorded:
            out += ["--ro-bind", os.path.join(root, rel), os.path.join(root, rel)]
    out += _pinned(wall, placement)  # before the hidden mounts: a bind over a directory would uncover them
    out += _hidden(wall, placement, _empty_file(tmpdir))
    out += _readonly(wall, placement, [root])
    for path in (tmpdir, *writable):  # last: the checks' cache may lie in a read-only directory (the data dir)
        out += ["--bind", str(path), str(path)]
    out += ["--setenv", "TMPDIR", str(tmpdir), "--setenv", WALLED_MARK, "1",
            "--chdir", str(cwd or placement.root), "--", *argv]
    return out


def _hidden(wall: Wall, placement: Placement, empty: str) -> list[str]:
    """An empty tmpfs over each hidden directory, an empty regular file over each hidden file (not
    /dev/null: `git add -A` refuses a character device in the workspace, and so would a commit)."""
    out = []
    for path in wall.hidden:
        seen = placement.host(path) if not _unrecorded(path, placement) else path
        if os.path.isdir(seen):
            out += ["--tmpfs", path]
        elif os.path.exists(seen):
            out += ["--ro-bind", empty, path]
    return out


def _empty_file(tmpdir: Path) -> str:
    """An empty file in the run's own TMPDIR (gone with it), to mount over hidden files."""
    path = os.path.join(str(tmpdir), ".vacant-hidden")
    with open(path, "w"):
        pass
    return path


def _pinned(wall: Wall, placement: Placement) -> list[str]:
    """On the live workspace, `.git` and each directory below the root that holds a protected
    path, bound over itself: a mount point cannot be renamed (EBUSY), so the agent cannot move the
    git directory or a settings directory away and put a fresh one in its place."""
    if placement.state is not None:
        return []
    root = str(placement.root)
    protected = [os.path.join(root, ".git"), *(os.path.dirname(path) for path in wall.readonly)]
    directories = sorted({path for path in protected if inside(path, root) and path != root and os.path.isdir(path)
                          and not os.path.islink(path)}, key=lambda path: path.count(os.sep))
    return [arg for path in directories for arg in ("--bind", path, path)]


def _readonly(wall: Wall, placement: Placement, writable: list[str]) -> list[str]:
    """Read-only again where a writable mount would make a protected path writable: on the live
    workspace, its hook settings and git's hooks and config (which run later as the person)."""
    if placement.state is not None:
        return []  # the state is a scratch copy and the live paths over it are read-only already
    git = os.path.join(str(placement.root), ".git")
    out = []
    for path in [*wall.readonly, os.path.join(git, "hooks"), os.path.join(git, "config")]:
        if os.path.exists(path) and any(inside(path, w) for w in writable):
            out += ["--ro-bind", path, path]
    return out


def _unrecorded(path: str, placement: Placement) -> bool:
    root = str(placement.root)
    return any(inside(path, os.path.join(root, rel)) for rel in placement.unrecorded)


def unrecorded_paths(live: Path, left_out: Callable[[str, bool], bool], limit: int = 512) -> tuple[str, ...] | None:
    """The live workspace's entries that the record leaves out (`left_out(rel, is_dir)`: its
    ignore rules, excludes, `.git`), each as high up as it goes: an ignored directory is one
    entry. None when there are more than `limit` (the caller says the replay may not be faithful
    rather than mount that many). Bytecode caches are never brought: the state's sources compile
    their own."""
    found: list[str] = []
    stack = [""]
    while stack:
        reldir = stack.pop()
        try:
            entries = sorted(os.scandir(os.path.join(live, reldir)), key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in entries:
            rel = f"{reldir}/{entry.name}" if reldir else entry.name
            is_dir = entry.is_dir(follow_symlinks=False)
            if not left_out(rel, is_dir):
                if is_dir:
                    stack.append(rel)
                continue
            if entry.name in NOT_UNDER_STATE:
                continue
            found.append(rel)
            if len(found) > limit:
                return None
    return tuple(sorted(found))


def bwrap_path() -> str:
    found = shutil.which("bwrap")
    if not found:
        raise NoBubblewrap("the wall needs bubblewrap (`sudo apt-get install bubblewrap`)")
    return found


class NoBubblewrap(RuntimeError):
    pass


_usable: dict[str, str | None] = {}


def usable() -> str | None:
    """None when bubblewrap can wall a command on this machine; else why not (once per process)."""
    try:
        bwrap = bwrap_path()
    except NoBubblewrap as error:
        return str(error)
    if bwrap not in _usable:
        try:
            done = subprocess.run([bwrap, "--unshare-pid", "--unshare-net", "--ro-bind", "/", "/", "--dev", "/dev",
                                   "--proc", "/proc", "--setenv", WALLED_MARK, "1", "--", "true"],
                                  capture_output=True, text=True, timeout=10)
            _usable[bwrap] = None if done.returncode == 0 else \
                f"bubblewrap cannot start here: {done.stderr.strip()[:200] or f'exit {done.returncode}'}"
        except (OSError, subprocess.SubprocessError) as error:
            _usable[bwrap] = f"bubblewrap cannot start here: {error}"
    return _usable[bwrap]
