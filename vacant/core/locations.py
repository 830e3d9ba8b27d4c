"""Where a workspace's root and its state live. Stdlib only (hot path).

The state directory (step logs, objects, the ask book, flags) lives where ordinary cleanup of the
workspace cannot reach it:

* a git workspace: inside git's own directory, `<git dir>/vacant` (`.git/vacant`; a worktree's
  `.git/worktrees/<name>/vacant`; a submodule's `.git/modules/<name>/vacant`). `git clean`,
  `git stash --all` and `git checkout` never touch git's own directory. The git dir is found by
  reading `.git` (a directory, or a `gitdir:` file), never by spawning git.
* any other workspace: the user's data directory, `$VACANT_HOME` or `$XDG_DATA_HOME/vacant`, under
  `workspaces/<hash>-<name>` keyed by the workspace's real path.
* `$VACANT_STATE_DIR` overrides both (for the person's commands; a hook never reads it, see
  vacant/core/trustenv.py: it follows the install registry instead).
* the install registry, `<user data dir>/installs/ws-<hash>.json`, written at every install
  outside the workspace, names the workspace and the state directory chosen then. It is how a hook
  knows a workspace is installed even when its state directory or `install.json` was deleted
  (`install_gone`: the gate then fails closed), and where the state directory is when the person
  installed with `$VACANT_STATE_DIR`.
* a legacy `<workspace>/.vacant/` (vacant before this layout) is still read and written while the
  new location holds no install record; `vacant init` moves it into the new location.

A workspace is *installed* when its state directory holds `install.json` (written by `vacant
init` and `vacant do`). Hooks record only in an installed workspace and otherwise do nothing (they
fail open): a payload whose cwd is `/etc` never creates state for `/etc`.
"""

from __future__ import annotations

from vacant.core import leanjson as json  # not `import json`: 13 ms CPU of each hook call (vacant/hook/lean.py)
import os
import stat
import time
from pathlib import Path

from vacant.core.sha import sha256

TYPE_CHECKING = False  # typing's, without importing typing: that costs each hook call 15 ms CPU (hook/lean.py)
if TYPE_CHECKING:
    from typing import Any

STATE_DIR_NAME = ".vacant"  # the legacy in-workspace location
GIT_STATE_NAME = "vacant"  # the directory inside git's own directory
INSTALL_RECORD = "install.json"
SKIP_NAMES = (".git", STATE_DIR_NAME)
_GITFILE_CAP = 4096  # a `gitdir:` file is one short line


class WorkspaceError(RuntimeError):
    """A user-facing problem locating the workspace (one sentence saying what to do)."""


def git_dir(root: Path) -> Path | None:
    """Git's own directory for the workspace whose top level is `root` (None: not a git top level).

    `.git` is a git directory, or a regular file `gitdir: PATH` (worktrees, submodules); anything
    else (a FIFO, a device, a dangling link, an empty `.git` directory) is not followed. An empty
    one is no rarity: Codex's sandbox creates `.git` under every writable root (`/tmp` included)
    as the mount point that keeps it read-only, and taking that for a repository would make every
    directory below it one workspace."""
    dot = Path(root) / ".git"
    try:
        info = os.stat(dot)
    except (OSError, ValueError):
        return None
    if stat.S_ISDIR(info.st_mode):
        return dot if is_git_directory(dot) else None
    if not stat.S_ISREG(info.st_mode):
        return None
    try:
        with open(dot, "rb") as handle:
            text = handle.read(_GITFILE_CAP).decode("utf-8", "replace").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    target = Path(text[len("gitdir:"):].strip())
    target = target if target.is_absolute() else Path(root) / target
    target = Path(os.path.normpath(target))
    return target if target.is_dir() else None


def is_git_directory(path: Path) -> bool:
    """git's own test (setup.c `is_git_directory`): a HEAD, and objects or a `commondir` pointer."""
    return os.path.isfile(path / "HEAD") and (os.path.isdir(path / "objects") or os.path.isfile(path / "commondir"))


def git_top(start: Path) -> Path | None:
    """The nearest ancestor of `start` (itself included) whose `.git` is a repository's (see
    `git_dir`): a `.git` that is not one is passed over, as git passes over it."""
    for candidate in (start, *start.parents):
        dot = candidate / ".git"
        if os.path.lexists(dot) and (not os.path.isdir(dot) or is_git_directory(dot)):
            return candidate
    return None


def workspace_key(root: Path) -> str:
    """`<hash>-<name>` of a workspace's real path: its directory name under the user data dir."""
    real = os.path.realpath(root)
    digest = sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    name = safe_name(os.path.basename(real) or "root")[:40]
    return f"{digest}-{name}"


def external_state_dir(root: Path) -> Path:
    """Where a workspace's state lives when it has no git directory of its own."""
    return user_data_dir() / "workspaces" / workspace_key(root)


def _new_state_dir(root: Path) -> Path:
    """In git's directory; but a workspace installed before it became a git repository (`git init`
    after `vacant init`) keeps its state where it was installed."""
    gitdir = git_dir(Path(root))
    if gitdir is None:
        return external_state_dir(root)
    inside_git = gitdir / GIT_STATE_NAME
    if not (inside_git / INSTALL_RECORD).is_file():
        outside = external_state_dir(root)
        if (outside / INSTALL_RECORD).is_file():
            return outside
    return inside_git


def legacy_state_dir(root: Path) -> Path:
    return Path(root) / STATE_DIR_NAME


class Workspace:
    """An installed workspace as one hook call found it: its root, its state directory and its
    install record, looked up once (the lookup reads the install registry) and passed down to
    the recorder and the gate. A class of its own, not a NamedTuple: the hot path never imports
    typing."""

    __slots__ = ("install", "root", "state")

    def __init__(self, root: Path, state: Path, install: dict[str, Any] | None) -> None:
        self.root = root
        self.state = state
        self.install = install  # None: a legacy `.vacant/` directory, which holds none

    def __repr__(self) -> str:
        return f"Workspace(root={self.root!r}, state={self.state!r})"


def state_dir(root: Path) -> Path:
    """The workspace's state directory (see the module docstring for where and why)."""
    override = os.environ.get("VACANT_STATE_DIR")
    if override:
        return Path(override).resolve()
    entry = registered(root)
    chosen = entry.get("state_dir") if entry else None
    if isinstance(chosen, str) and os.path.isdir(chosen):
        return Path(chosen)
    new = _new_state_dir(root)
    legacy = legacy_state_dir(root)
    if os.path.isdir(legacy) and not os.path.islink(legacy) and not (new / INSTALL_RECORD).is_file():
        return legacy
    return new


def read_install(root: Path, state: Path | None = None) -> dict[str, Any] | None:
    """The install record of a workspace (None: vacant was never installed there). `state`: its
    state directory, when the caller holds it already."""
    path = (state_dir(root) if state is None else Path(state)) / INSTALL_RECORD
    try:
        with open(path, "rb") as handle:
            data = json.loads(handle.read(1 << 16))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def installed(root: Path, legacy_ok: bool = True) -> bool:
    """Whether vacant was installed in this workspace (`vacant init`, `vacant do`), or (with
    `legacy_ok`) it holds a legacy `.vacant/` directory. With $VACANT_STATE_DIR the record must
    name this workspace."""
    return _installed_at(Path(root), legacy_ok) is not None


def _installed_at(root: Path, legacy_ok: bool) -> Workspace | None:
    directory = state_dir(root)
    if directory == legacy_state_dir(root):
        return Workspace(root, directory, None) if legacy_ok else None
    record = read_install(root, directory)
    if record is None:
        return None
    if os.environ.get("VACANT_STATE_DIR") and record.get("workspace") != os.path.realpath(root):
        return None
    return Workspace(root, directory, record)


def installed_root(start: Path) -> Path | None:
    """The nearest ancestor of `start` (itself included) vacant was installed in, else None."""
    found = installed_workspace(start)
    return None if found is None else found.root


def installed_workspace(start: Path) -> Workspace | None:
    """The nearest installed workspace around `start` (itself included), with its state directory
    and install record as found there (each looked up once), else None."""
    try:
        start = Path(start).resolve()
    except (OSError, RuntimeError, ValueError):
        return None
    top = git_top(start)
    for candidate in (start, *start.parents):
        # a stray legacy `.vacant/` above the git top level (or above a non-git start, e.g. in
        # /tmp) does not make everything below it a workspace
        legacy_ok = candidate == start or (top is not None and (candidate == top or top in candidate.parents))
        found = _installed_at(candidate, legacy_ok)
        if found is not None:
            return found
    return None


def find_root(start: Path | None = None) -> Path:
    """The nearest installed workspace around `start`, else the git top level, else `start`."""
    start = Path(start or os.getcwd()).resolve()
    return installed_root(start) or git_top(start) or start


def new_root(start: Path | None = None) -> Path:
    """Where `vacant init` puts a workspace: the git top level, else the directory itself."""
    start = Path(start or os.getcwd()).resolve()
    return git_top(start) or start


def ensure_state_dir(root: Path) -> Path:
    """Create the state directory (runs/, objects/), owner-only."""
    return prepare_state_dir(root, state_dir(root))


def prepare_state_dir(root: Path, directory: Path) -> Path:
    """Create `directory`, the workspace's state directory as the caller found it (runs/, objects/), owner-only."""
    (directory / "runs").mkdir(parents=True, exist_ok=True, mode=0o700)
    (directory / "objects").mkdir(exist_ok=True, mode=0o700)
    if directory == legacy_state_dir(root):
        ignore = directory / ".gitignore"
        if not ignore.exists():
            ignore.write_text("*\n")
    return directory


def mark_installed(root: Path, **fields: object) -> Path:
    """Write (or update) the install record: the workspace, when, and what was installed.

    `fields` are merged into the record; `hooks` accumulates {platform: settings file}."""
    migrate_legacy(root)
    record = read_install(root) or {}
    hooks = dict(record.get("hooks") or {})
    popped = fields.pop("hooks", {}) or {}
    given: dict[str, Any] = popped if isinstance(popped, dict) else {}
    if given:  # `vacant init` wrote these: fix what it wrote, and which vacant, for exact checks later
        from vacant.core.installcheck import entries_digest, on_path, package_digest

        given = {name: {**entry, "digest": entries_digest(entry["path"])} if isinstance(entry, dict)
                 and isinstance(entry.get("path"), str) else entry for name, entry in given.items()}
        fields.setdefault("package", {"path": str(Path(__file__).resolve().parents[1]), "digest": package_digest()})
        fields.setdefault("vacant_on_path", on_path())
    hooks.update(given)
    record.update({"workspace": os.path.realpath(root), "at": record.get("at") or time.time(), **fields,
                   "hooks": hooks})
    return write_install(root, record)


def write_install(root: Path, record: dict[str, Any]) -> Path:
    """Replace the install record (temp then rename), and register the install outside the workspace."""
    path = ensure_state_dir(root) / INSTALL_RECORD
    _write_json(path, record)
    entry = registered(root) or {}
    entry.update({"workspace": os.path.realpath(root), "state_dir": str(path.parent.resolve()),
                  "at": entry.get("at") or time.time()})
    _write_json(registry_path(root), entry)
    return path


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    os.replace(temp, path)
    _REGISTRY_CACHE.clear()


# -- the install registry (outside the workspace) ----------------------------------------------

_REGISTRY_CACHE: dict[str, tuple[int, dict[str, Any] | None]] = {}


def registry_path(root: Path) -> Path:
    real = os.path.realpath(root)
    digest = sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:24]
    return user_data_dir() / "installs" / f"ws-{digest}.json"


def registered(root: Path) -> dict[str, Any] | None:
    """The registry's entry for this workspace (None: never installed, or uninstalled)."""
    path = str(registry_path(root))
    try:
        mtime = os.stat(path).st_mtime_ns
    except (OSError, ValueError):
        return None
    cached = _REGISTRY_CACHE.get(path)
    if cached is not None and cached[0] == mtime:
        return dict(cached[1]) if cached[1] is not None else None
    try:
        with open(path, "rb") as handle:
            data = json.loads(handle.read(1 << 16))
    except (OSError, ValueError):
        data = None
    if not isinstance(data, dict) or data.get("workspace") != os.path.realpath(root):
        data = None
    _REGISTRY_CACHE[path] = (mtime, data)
    return dict(data) if data is not None else None


def unregister(root: Path) -> None:
    """The person removed vacant from this workspace (`vacant uninstall --all`)."""
    try:
        registry_path(root).unlink()
    except OSError:
        pass
    _REGISTRY_CACHE.clear()


def install_gone(start: Path) -> tuple[Path, str] | None:
    """(root, what is missing) when the nearest ancestor the registry names as installed has lost
    its state directory or its install record; None when nothing registered is broken."""
    try:
        start = Path(start).resolve()
    except (OSError, RuntimeError, ValueError):
        return None
    for candidate in (start, *start.parents):
        entry = registered(candidate)
        if entry is None:
            continue
        if installed(candidate, legacy_ok=False):
            return None
        named = entry.get("state_dir")
        chosen = named if isinstance(named, str) else str(state_dir(candidate))
        if not os.path.isdir(chosen):
            return candidate, f"its state directory {chosen} is gone"
        return candidate, f"its install record {os.path.join(chosen, INSTALL_RECORD)} is gone"
    return None


def migrate_legacy(root: Path) -> Path | None:
    """Move a legacy `<workspace>/.vacant/` into the new state directory (one rename; nothing is
    copied or deleted). Returns where it went, or None when there was nothing to move. When the
    new location already holds state, the legacy directory is left where it is (and no longer read)."""
    if os.environ.get("VACANT_STATE_DIR"):
        return None
    legacy, new = legacy_state_dir(root), _new_state_dir(root)
    if not os.path.isdir(legacy) or os.path.islink(legacy) or os.path.lexists(new):
        return None
    new.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.rename(legacy, new)
    except OSError as error:  # another filesystem: the person moves it
        raise WorkspaceError(f"could not move {legacy} to {new} ({error.strerror}): move it by hand, "
                             "then run `vacant init` again") from None
    (new / ".gitignore").unlink(missing_ok=True)  # vacant's own file, written when it lived in the tree
    return new


def runs_dir(root: Path) -> Path:
    return state_dir(root) / "runs"


_SAFE_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")


def safe_name(text: str) -> str:
    """Every character but ASCII letters, digits, `.`, `_` and `-` made `_` (`re.sub(r"[^A-Za-z0-9._-]",
    "_", text)`, without compiling a pattern at every hook call)."""
    return "".join(char if char in _SAFE_CHARS else "_" for char in text)


def run_dir(root: Path, run_id: str, state: Path | None = None) -> Path:
    """A run's directory; `state`: the workspace's state directory, when the caller holds it."""
    safe = safe_name(run_id).lstrip(".") or "run"
    return (runs_dir(root) if state is None else Path(state) / "runs") / safe


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
