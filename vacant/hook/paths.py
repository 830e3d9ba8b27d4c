"""Where a workspace's daemon keeps its files, and how to start one detached. Stdlib only: the
lean client imports this on every call.

`<state>/daemon/` (0700) holds `lock` (flocked by the live daemon for its whole life: the one-
instance rule, and a killed daemon's lock is released by the kernel, so a stale pid or socket is
recognised by taking the lock), `daemon.json` (pid, port, socket of the live daemon), `config.json`
(0600: the workspace's HTTP port and secret, kept across restarts so installed hook URLs stay
valid), `daemon.log`. The socket lives there too, unless that path is too long for AF_UNIX
(108 bytes): then in a 0700 directory of the user's own under the temp directory, or under /tmp
when the temp directory's path is too long as well (a daemon that cannot bind its socket cannot
start, and each session's first call then waits SESSION_START_WAIT_S for it).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from vacant.core import leanjson  # not `import json`: 13 ms CPU of a session's first hook call (hook/lean.py)
from vacant.core.locations import state_dir
from vacant.core.trustenv import for_child

SOCKET_MAX = 100
SPAWN_GRACE_S = 10.0  # a client that just started a daemon does not start another one while it comes up


def daemon_dir(root: Path) -> Path:
    return state_dir(root) / "daemon"


def socket_path(root: Path) -> str:
    path = str(daemon_dir(root) / "sock")
    if len(path.encode()) <= SOCKET_MAX:
        return path
    import zlib  # only for a socket path too long for AF_UNIX: every fallback call that starts a daemon imports this module

    tag = f"{zlib.crc32(str(Path(root).resolve()).encode()):08x}{zlib.adler32(path.encode()):08x}"
    for base in (os.environ.get("TMPDIR") or "/tmp", "/tmp"):  # a TMPDIR too long for the socket: /tmp's
        path = os.path.join(base, f"vacant-{os.getuid()}", f"{tag}.sock")
        if len(path.encode()) <= SOCKET_MAX:
            break
    return path


def read_json(path: Path) -> dict[str, object] | None:
    try:
        data = leanjson.loads(Path(path).read_bytes())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def info(root: Path) -> dict[str, object] | None:
    """What the live (or last) daemon wrote about itself: pid, port, socket, started."""
    return read_json(daemon_dir(root) / "daemon.json")


def _came_up_since(directory: Path, spawned_at: float) -> bool:
    """Whether a daemon started after that spawn came up (wrote daemon.json): one that is not
    answering now has died since, and the grace for its start-up is over."""
    started = (read_json(directory / "daemon.json") or {}).get("started")
    return isinstance(started, (int, float)) and started >= spawned_at


def recently_spawned(directory: Path) -> bool:
    """A daemon was started for this daemon directory less than SPAWN_GRACE_S ago and has not come
    up since (it may still be starting): no other is started. (The lean client tells the same from
    two stat calls: vacant/hook/client.py, `coming_up`.)"""
    try:
        spawned_at = (directory / "spawned").stat().st_mtime
    except FileNotFoundError:
        return False
    return time.time() - spawned_at < SPAWN_GRACE_S and not _came_up_since(directory, spawned_at)


def spawn(root: Path, reason: str = "client") -> int:
    """Start a daemon for `root`, detached, without waiting for it: its pid (a child of this
    process until it exits), or 0 when one was started a moment ago (it may still be coming up)
    or none could be."""
    directory = daemon_dir(root)
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        if recently_spawned(directory):
            return 0
        (directory / "spawned").write_text(reason)
        log = os.open(directory / "daemon.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                       (os.POSIX_SPAWN_DUP2, log, 1), (os.POSIX_SPAWN_DUP2, log, 2)]
            # isolated like the hook (daemon_command) and with a scrubbed environment: no VACANT_* of
            # the agent's makes a respawned daemon run anything but vacant's own code (vacant/core/trustenv.py)
            return os.posix_spawn(sys.executable, daemon_command(root), for_child(os.environ),
                                  file_actions=actions, setsid=True)
        finally:
            os.close(log)
    except OSError:
        return 0


# The daemon's interpreter starts as the hook's launcher does (vacant/vacant-hook-client.py): -I (no
# PYTHONPATH, no user site-packages, not the working directory on sys.path) and -S (no site
# processing: no .pth file in any site-packages runs, an editable install's finder included, where
# an unwalled agent could have planted one). vacant's own package root (the directory holding this
# package, found from this file, never from the environment) goes first on sys.path and the
# environment's site-packages after the standard library, by path, as the lean client puts them
# (vacant/hook/client.py, _importable).
DAEMON_BOOT = ("import sys; a = sys.argv; i = a.index('--'); sys.path.insert(0, a[i + 1]); "
               "sys.path.extend(a[i + 2:]); del a[i:]; module = a.pop(1); import runpy; "
               "runpy.run_module(module, run_name='__main__', alter_sys=True)")


def daemon_command(root: Path) -> list[str]:
    """The daemon's command line: `python -I -S -c BOOT vacant.daemon ROOT -- PACKAGE_ROOT SITE...`."""
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    lib = "lib/python%d.%d/site-packages" % sys.version_info[:2]
    environment = sys.executable.rpartition("/")[0].rpartition("/")[0]
    packages = [path for path in dict.fromkeys((f"{environment}/{lib}", f"{sys.prefix}/{lib}")) if os.path.isdir(path)]
    return [sys.executable, "-I", "-S", "-c", DAEMON_BOOT, "vacant.daemon", str(root), "--", package_root, *packages]
