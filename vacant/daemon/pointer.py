"""Where the lean client finds a running daemon without importing anything: a pointer file per
workspace root in a private per-user directory, written by the daemon (which knows the state
directory) and removed when it exits. Only os (the client's whole import budget).

`<TMPDIR or /tmp>/vacant-<uid>/roots/<fnv1a64 of the root's real path>` holds two lines: the
root and the socket path. The client trusts the directory only when it is a real directory owned
by the user with no group/other permissions, and the socket only when the user owns it: anyone
else could otherwise plant a "daemon" that allows every call. A missing or stale pointer only
costs the slow path (locate the state directory, fall back in-process).
"""

from __future__ import annotations

import os
import stat

FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3


def _fnv(data: bytes) -> str:
    value = FNV_OFFSET
    for byte in data:
        value = ((value ^ byte) * FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return f"{value:016x}"


def base_dir() -> str:
    return os.path.join(os.environ.get("TMPDIR") or "/tmp", f"vacant-{os.getuid()}", "roots")


def pointer_path(root: str) -> str:
    return os.path.join(base_dir(), _fnv(os.fsencode(root)))


def _private(path: str, directory: bool) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    kind_ok = stat.S_ISDIR(st.st_mode) if directory else stat.S_ISSOCK(st.st_mode)
    return kind_ok and st.st_uid == os.getuid() and not st.st_mode & 0o077


def write(root: str, socket_path: str) -> None:
    """The daemon's side: make the private directory (refusing one it does not own) and the pointer."""
    base = base_dir()
    for directory in (os.path.dirname(base), base):  # makedirs would give the parent the umask's mode
        try:
            os.mkdir(directory, 0o700)
        except FileExistsError:
            st = os.lstat(directory)
            if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and st.st_mode & 0o077:
                os.chmod(directory, 0o700)  # ours, made by an earlier version too openly
    if not (_private(os.path.dirname(base), True) and _private(base, True)):
        raise PermissionError(f"{base} is not a private directory of this user: no pointer written")
    temp = f"{pointer_path(root)}.{os.getpid()}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, f"{root}\n{socket_path}\n".encode())
    finally:
        os.close(fd)
    os.replace(temp, pointer_path(root))


def remove(root: str, socket_path: str) -> None:
    path = pointer_path(root)
    try:
        with open(path) as handle:
            if handle.read() == f"{root}\n{socket_path}\n":
                os.unlink(path)
    except OSError:
        pass


def find(start: str, walk_up: bool) -> tuple[str, str] | None:
    """(root, socket) of a running daemon for `start` (or, walking up, for its nearest ancestor
    that has one); None when there is no trustworthy pointer."""
    base = base_dir()
    if not (_private(os.path.dirname(base), True) and _private(base, True)):
        return None
    directory = os.path.realpath(start)
    while True:
        try:
            with open(os.path.join(base, _fnv(os.fsencode(directory)))) as handle:
                root, sock = handle.read().split("\n")[:2]
        except (OSError, ValueError):
            root = sock = ""
        if root == directory and _private(sock, False):
            return root, sock
        parent = os.path.dirname(directory)
        if not walk_up or parent == directory:
            return None
        directory = parent
