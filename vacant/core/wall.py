"""The wall: the paths no program the agent runs may read or write. One source for `vacant init`
(the platform's own sandbox settings), `vacant do` (bubblewrap) and the gate (the platforms' own
file tools, which run outside any Bash sandbox). Stdlib only (the gate imports it on the hot path).

Two classes of path:

* hidden (neither read nor written): the person's key directory (`~/.config/vacant`), the
  workspace's state directory (`.git/vacant`, or its place under the user data dir: the daemon's
  socket, config and secret live in its `daemon/`), the daemon's temp directory
  (`$TMPDIR/vacant-<uid>/`: fallback sockets and the pointers), and a settings file holding the
  daemon's token (Claude's local settings).
* read-only: the hook settings of every platform in every scope, the user data dir (install
  backups and records), vacant's installed package and the whole environment it runs from (the
  interpreter's prefix: its site-packages too), and the directories of the `vacant` and the
  interpreter on PATH (a shim there would make the person's own `vacant verify` lie).

A sandbox hides only what exists when it wraps a command (Claude's and bubblewrap's denied
directories are mounts over existing paths): `ensure_hidden_dirs` creates the directories vacant
itself owns before any config naming them is written.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from vacant.core.locations import state_dir, user_config_dir, user_data_dir
from vacant.core.platform_facts import settings_paths

TYPE_CHECKING = False  # typing's, without importing typing: that costs each hook call 15 ms CPU (hook/lean.py)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

TOKEN_SETTINGS = (".claude/settings.local.json",)  # holds the daemon's http token (`vacant init`)
# The Debian packages the wall needs (Claude Code's sandbox and `vacant do` use bubblewrap; Claude's
# network proxy inside it uses socat). `vacant init` names the missing ones, `doctor` fails on them.
PACKAGES = {"bwrap": "bubblewrap", "socat": "socat"}
# Claude Code's sandbox bridges its network proxy through two unix sockets it names in its TMPDIR
# (`claude-socks-<16 hex>.sock`, measured on 2.1.197). A socket's path holds at most 107 bytes, so
# under a longer TMPDIR the sandbox never starts and, failing closed, every Bash call fails.
SANDBOX_SOCKET_NAME = "/claude-socks-0123456789abcdef.sock"
SOCKET_PATH_MAX = 107
# Commands a platform's sandbox runs outside the wall (Claude Code's `sandbox.excludedCommands`,
# which `vacant init` writes as `git push` and `git push:*`): a push needs what the wall keeps from
# the agent (a remote outside the workspace, the person's credentials, the network), so behind the
# wall an approved push failed and the approval was spent on nothing. Measured on Claude Code
# 2.1.197: a line any of whose commands is an excluded one runs *whole* outside the sandbox (`git
# push … && cat FILE`, and `git push` then `cat FILE` on the next line, read a denied file), while
# `git -C . push`, `echo 'git push'`-style arguments and `git stash push` stayed inside. So the gate
# holds every line in which the words follow each other anywhere (`outside_the_wall`), for the
# person's answer: nothing runs outside the wall unless the person approved that exact line.
UNWALLED_COMMANDS = ("git push",)


def outside_the_wall(command: str) -> str | None:
    """The unwalled command a shell line may run outside the wall: its words one after the other
    anywhere in the line, however spaced, quoted, escaped or punctuated (`(git push)`, `g\\it
    "push"`, `/usr/bin/git push`, `git pushx`, even a mention in a string: broader than the
    platform's match, never narrower), or None."""
    words = [word for word in (_bare(word) for word in command.split()) if word]
    for unwalled in UNWALLED_COMMANDS:
        first, *rest = unwalled.split()
        for at, word in enumerate(words):
            if (word == first or word.endswith("/" + first)) and _follows(rest, words[at + 1:]):
                return unwalled
    return None


def _bare(word: str) -> str:
    for mark in "'\"\\;&|()`$<>{}":
        word = word.replace(mark, "")
    return word


def _follows(wanted: list[str], words: list[str]) -> bool:
    """`words` begin with `wanted`, the last one as a prefix (a prefix match reaches `pushx`)."""
    if len(words) < len(wanted):
        return False
    *whole, last = wanted or [""]
    return words[:len(whole)] == whole and (not wanted or words[len(whole)].startswith(last))


class Wall:
    """`hidden`: real paths no program of the agent may read or write; `readonly`: real paths it
    may read but never write. (A plain class: dataclasses is too heavy for the hook's hot path.)
    `readonly` may be given as a function, called once when first asked: a read's check never
    asks (a Read's gate call resolves only the hidden paths, a third of the wall's)."""

    __slots__ = ("hidden", "_readonly")

    def __init__(self, hidden: tuple[str, ...], readonly: tuple[str, ...] | Callable[[], tuple[str, ...]]) -> None:
        self.hidden = hidden
        self._readonly = readonly

    @property
    def readonly(self) -> tuple[str, ...]:
        if callable(self._readonly):
            self._readonly = self._readonly()
        return self._readonly

    def __repr__(self) -> str:
        return f"Wall(hidden={self.hidden!r}, readonly={self.readonly!r})"

    def refusal(self, path: str, writing: bool) -> str | None:
        """The protected path `path` falls under (resolved: symlinks and `..`), or None."""
        real = os.path.realpath(path)
        for base in self.hidden + (self.readonly if writing else ()):
            if inside(real, base):
                return base
        return None


def inside(path: str, base: str) -> bool:
    return path == base or path.startswith(base.rstrip(os.sep) + os.sep)


def temp_dirs() -> list[Path]:
    """`<TMPDIR or /tmp>/vacant-<uid>`: the daemon's pointers and fallback sockets (both
    candidates: the hooks may see another TMPDIR than the person's shell)."""
    bases = {os.environ.get("TMPDIR") or "/tmp", "/tmp"}
    return [Path(base) / f"vacant-{os.getuid()}" for base in sorted(bases)]


def on_path(program: str, path_value: str | None = None) -> list[str]:
    """Every `program` on PATH (the first one runs; the others may shadow it after a PATH change)."""
    found = []
    for directory in (path_value if path_value is not None else os.environ.get("PATH", "")).split(os.pathsep):
        candidate = os.path.join(directory or ".", program)
        if os.access(candidate, os.X_OK) and os.path.isfile(candidate):
            found.append(candidate)
    return found


def install_dirs() -> list[str]:
    """vacant's installed package, the interpreter's whole environment (its bin/ and its prefix:
    a `.pth` in its site-packages would run in every `vacant` the person starts), and the
    directories of every `vacant` on PATH. (Strings, as every path the wall resolves: it is a
    write's gate call's.)"""
    import sys

    package = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    return [package, os.path.dirname(sys.executable), sys.prefix, *(os.path.dirname(found) for found in on_path("vacant"))]


def _home() -> str:
    return os.environ.get("HOME") or str(Path.home())


def _codex_home() -> str:
    return os.environ.get("CODEX_HOME") or os.path.join(_home(), ".codex")


def settings_files(root: Path | str, extra: list[Path] | tuple[Path, ...] = ()) -> list[str]:
    """The hook settings of every registered platform, in every scope, plus any file an install
    named (none registered raises: the registry was not loaded, and the caller fails closed)."""
    in_workspace, in_home = settings_paths()
    home, codex = _home(), _codex_home()
    files = [os.path.join(root, rel) for rel in in_workspace]
    files += [os.path.join(home, rel) for rel in in_home]
    files += [os.path.join(codex, "hooks.json"), os.path.join(codex, "config.toml")]
    return [*files, *(os.fspath(p) for p in extra)]


def wall_for(root: Path, extra_settings: list[Path] | tuple[Path, ...] = (), state: Path | None = None) -> Wall:
    """The wall around workspace `root` (real paths; both classes, existing or not). `state`: its
    state directory when the caller has just found it (else found here)."""
    hidden = [user_config_dir(), state_dir(root) if state is None else state, *temp_dirs()]
    hidden += [Path(root) / rel for rel in TOKEN_SETTINGS]
    known: dict[str, tuple[str, bool]] = {}  # the directories the two classes share, resolved once
    real_hidden = tuple(_unique(realpaths(hidden, known)))

    def real_readonly() -> tuple[str, ...]:
        readonly: list[str | Path] = [*settings_files(root, extra_settings), user_data_dir(), *install_dirs()]
        return tuple(p for p in _unique(realpaths(readonly, known))
                     if not any(inside(p, h) for h in real_hidden))

    return Wall(real_hidden, real_readonly)


def realpaths(paths: Iterable[str | os.PathLike[str]], known: dict[str, tuple[str, bool]] | None = None) -> list[str]:
    """`os.path.realpath` of each path, each directory they share resolved once (`known`: what
    earlier calls resolved, {absolute path: (its real path, whether it may exist)}).

    realpath(dir/name) is realpath(realpath(dir)/name), and a name under a real directory is
    itself unless it is a symlink: so each path costs the lstat of its last component once its
    directory is known, and none below a directory found missing (where realpath's own lstat would
    fail too, and a failed lstat reads as "not a link" there as here). A symlink, and any path
    that is relative or ends in `.`, `..` or `/`, is resolved by `os.path.realpath` itself.
    Four times quicker on the wall's thirty paths, held to `os.path.realpath` on generated trees of
    links (tests/unit/core/test_realpaths.py)."""
    known = {} if known is None else known
    return [_real(os.fspath(path), known)[0] for path in paths]


def _real(path: str, known: dict[str, tuple[str, bool]]) -> tuple[str, bool]:
    found = known.get(path)
    if found is not None:
        return found
    parent, _, name = path.rpartition("/")
    if not path.startswith("/") or name in ("", ".", ".."):  # (a `..` inside is the last name of a parent)
        result = (os.path.realpath(path), True)
    else:
        real_parent, may_exist = _real(parent, known) if parent else ("/", True)
        candidate = ("" if real_parent == "/" else real_parent) + "/" + name
        result = (candidate, False)
        if may_exist:
            try:
                mode = os.lstat(candidate).st_mode
            except FileNotFoundError:
                pass
            except OSError:  # realpath reads any failed lstat as "not a link"; below it, look again
                result = (candidate, True)
            else:
                result = (os.path.realpath(candidate) if stat.S_ISLNK(mode) else candidate, True)
    known[path] = result
    return result


def _unique(paths: Iterable[str]) -> list[str]:
    out: list[str] = []
    for path in paths:
        if path not in out:
            out.append(path)
    return out


def ensure_hidden_dirs(root: Path) -> list[Path]:
    """Create the hidden directories vacant owns (mode 0700) so that a sandbox can mount over them;
    returns those it created. Never the key itself: that is the person's to make."""
    made = []
    for directory in (user_config_dir(), state_dir(root), *temp_dirs()):
        if not directory.exists():
            directory.mkdir(parents=True, mode=0o700, exist_ok=True)
            made.append(directory)
    return made


def sandbox_tmpdir_too_long(tmpdir: str | None = None) -> bool:
    """Whether Claude Code's sandbox cannot start under this TMPDIR (its sockets' paths too long)."""
    base = (tmpdir if tmpdir is not None else os.environ.get("TMPDIR")) or "/tmp"
    return len(os.fsencode(base.rstrip("/") + SANDBOX_SOCKET_NAME)) > SOCKET_PATH_MAX


def missing_packages(path_value: str | None = None) -> list[str]:
    """The Debian packages of the wall whose program is not on PATH."""
    return [package for program, package in PACKAGES.items() if not on_path(program, path_value)]
