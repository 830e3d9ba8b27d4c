"""Reading files whose paths an agent chose: bounded, and never the content of a special file.

A path from a tool call may name `/dev/zero`, a FIFO nobody writes to, a socket or a 3 GB file.
Every content read of such a path goes through here: `lstat` first (a FIFO or device is never
opened), then `open` with O_NONBLOCK (a FIFO swapped in after the lstat does not stall the hook)
and `fstat` on the descriptor (what was opened is a regular file), then a read of at most `cap`
bytes. The errors are OSError subclasses, so a caller's `except OSError` keeps failing open.
Stdlib only (hot path).
"""

from __future__ import annotations

import errno
import os
import stat

KINDS = {stat.S_IFIFO: "fifo", stat.S_IFCHR: "char-device", stat.S_IFBLK: "block-device",
         stat.S_IFSOCK: "socket", stat.S_IFDIR: "directory", stat.S_IFLNK: "symlink"}
SMALL_CAP = 1 << 20  # vacant.toml, settings: small files read whole
_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)


class SpecialFile(OSError):
    """The path is not a regular file (a FIFO, a device, a socket, a directory)."""


class TooLarge(OSError):
    """The file is bigger than the reader's cap."""


def kind(mode: int) -> str:
    return "file" if stat.S_ISREG(mode) else KINDS.get(stat.S_IFMT(mode), "special")


def open_regular(path: str | bytes | os.PathLike[str], follow: bool = True) -> int:
    """A read-only descriptor of a regular file (SpecialFile otherwise; never blocks on a FIFO)."""
    info = os.stat(path) if follow else os.lstat(path)
    if not stat.S_ISREG(info.st_mode):
        raise SpecialFile(errno.EINVAL, f"not a regular file ({kind(info.st_mode)})", str(path))
    fd = os.open(path, _FLAGS)
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):
            raise SpecialFile(errno.EINVAL, f"not a regular file ({kind(opened.st_mode)})", str(path))
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_capped(path: str | bytes | os.PathLike[str], cap: int, truncate: bool = False) -> bytes:
    """The file's bytes, at most `cap` of them: TooLarge when it is bigger (or its first `cap`
    bytes with `truncate`); SpecialFile when it is not a regular file."""
    fd = open_regular(path)
    try:
        size = os.fstat(fd).st_size
        if size > cap and not truncate:
            raise TooLarge(errno.EFBIG, f"{size} bytes, above the {cap}-byte cap", str(path))
        chunks, left = [], cap + (0 if truncate else 1)  # one byte more tells a file that grew
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > cap:
        if not truncate:
            raise TooLarge(errno.EFBIG, f"grew above the {cap}-byte cap while read", str(path))
        data = data[:cap]
    return data


def read_text_capped(path: str | bytes | os.PathLike[str], cap: int) -> str:
    return read_capped(path, cap).decode("utf-8", "surrogateescape")
