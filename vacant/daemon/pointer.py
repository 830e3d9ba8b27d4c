"""Where the lean client finds a running daemon: a pointer file per workspace root in a private
per-user directory, written by the daemon (which knows the state directory) and removed when it
exits. The client's side (the path, the trust rules, the lookup) lives in client.py, which must
import nothing from vacant; this is the daemon's side.

`<TMPDIR or /tmp>/vacant-<uid>/roots/<fnv1a64 of the root's real path>` holds two lines: the
root and the socket path (see client.py for when the client trusts them).
"""

from __future__ import annotations

import os
import stat

from vacant.daemon.client import base_dir, find, fnv, private

__all__ = ["base_dir", "find", "pointer_path", "remove", "write"]


def pointer_path(root: str) -> str:
    return os.path.join(base_dir(), fnv(os.fsencode(root)))


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
    if not (private(os.path.dirname(base), True) and private(base, True)):
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
