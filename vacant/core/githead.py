"""The commit a workspace's git checkout is at, read from `.git` files without running git.

Stdlib only: the recorder calls it once per run start (hot path), where a `git` process would
cost more than the whole hook. Handles a `.git` directory or a `.git` file (worktrees,
submodules), a detached HEAD, loose refs and packed-refs. Any surprise answers None: the run is
still recorded, only without its starting commit.
"""

from __future__ import annotations

from pathlib import Path

from vacant.core.lazyre import Lazy

_OID = Lazy(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")


def _git_dir(root: Path) -> Path | None:
    for candidate in (root, *root.parents):
        dot_git = candidate / ".git"
        if dot_git.is_dir():
            if (dot_git / "HEAD").is_file():
                return dot_git
            continue  # an empty `.git` (a sandbox's mount point) is not a repository
        if dot_git.is_file():
            text = dot_git.read_text(errors="replace").strip()
            if text.startswith("gitdir:"):
                target = Path(text[len("gitdir:"):].strip())
                return target if target.is_absolute() else (candidate / target).resolve()
            return None
    return None


def _resolve(git_dir: Path, common: Path, ref: str) -> str | None:
    for base in (git_dir, common):
        loose = base / ref
        if loose.is_file():
            value = loose.read_text(errors="replace").strip()
            return value if _OID.match(value) else None
    packed = common / "packed-refs"
    if packed.is_file():
        for line in packed.read_text(errors="replace").splitlines():
            oid, _, name = line.partition(" ")
            if name == ref and _OID.match(oid):
                return oid
    return None


def _exists(git_dir: Path, common: Path, ref: str) -> bool:
    """Whether the ref is there at all (loose or packed): one that is but holds no object id is
    damaged, not unborn."""
    if (git_dir / ref).exists() or (common / ref).exists():
        return True
    packed = common / "packed-refs"
    return packed.is_file() and any(line.partition(" ")[2] == ref
                                    for line in packed.read_text(errors="replace").splitlines())


def head_commit(root: Path) -> str | None:
    """The commit HEAD names, or None (no git, an unborn branch, anything unexpected)."""
    state = head_state(root)
    return None if state is None or state.startswith("unborn ") else state


def head_state(root: Path) -> str | None:
    """The commit HEAD names, `unborn REF` on a branch with no commit yet, or None (no git,
    anything unexpected): what an approval's fingerprint compares (a first commit moves it)."""
    try:
        git_dir = _git_dir(Path(root).resolve())
        if git_dir is None:
            return None
        common_file = git_dir / "commondir"
        common = (git_dir / common_file.read_text().strip()).resolve() if common_file.is_file() else git_dir
        head = (git_dir / "HEAD").read_text(errors="replace").strip()
        if _OID.match(head):
            return head
        if head.startswith("ref: refs/"):
            ref = head[5:].strip()
            return _resolve(git_dir, common, ref) or (f"unborn {ref}" if not _exists(git_dir, common, ref) else None)
    except (OSError, ValueError):
        return None
    return None
