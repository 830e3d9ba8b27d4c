"""Where the lean client finds a running daemon: `<state>/daemon/socket`, a pointer inside the
workspace's state directory, written by the daemon when it starts and removed when it exits. The
client's side (the lookup, the trust rules) lives in client.py, which must import nothing from
vacant; this is the daemon's side.

It holds three lines: the workspace root (its real path), the socket path, and the secret this
daemon proves its answers with (made fresh at each start, 0600). Nothing in the temp directory is
ever trusted: a socket there (a long state path, see paths.socket_path) is found only through
this pointer, and answered for only with the proof (see client.py).
"""

from __future__ import annotations

import os
from pathlib import Path

from vacant.hook.client import POINTER, find, private, read_pointer

__all__ = ["find", "pointer_path", "read_pointer", "remove", "write", "private"]


def pointer_path(state: Path) -> Path:
    return Path(state) / POINTER


def write(state: Path, root: str, socket_path: str, secret: str) -> None:
    """The daemon's side: the pointer, born 0600 (temp then rename)."""
    path = pointer_path(state)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, f"{root}\n{socket_path}\n{secret}\n".encode())
    finally:
        os.close(fd)
    os.replace(temp, path)


def remove(state: Path, root: str, socket_path: str, secret: str) -> None:
    path = pointer_path(state)
    try:
        if path.read_text() == f"{root}\n{socket_path}\n{secret}\n":
            path.unlink()
    except OSError:
        pass
