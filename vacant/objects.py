"""Content-addressed blob store (`.vacant/objects/ab/cdef…`), keyed by xxh3-128, written once.

Blobs are written to a temp file and renamed into place, so a reader never sees a half blob and a
killed writer leaves only a temp file behind. Stdlib + xxhash only (hot path).
"""

from __future__ import annotations

import os
from pathlib import Path

import xxhash

DEFAULT_SIZE_CAP = 16 * 1024 * 1024
CHUNK = 1 << 20


def size_cap() -> int:
    try:
        return int(os.environ.get("VACANT_OBJECT_CAP", DEFAULT_SIZE_CAP))
    except ValueError:
        return DEFAULT_SIZE_CAP


def hash_bytes(data: bytes) -> str:
    return xxhash.xxh3_128_hexdigest(data)


class ObjectStore:
    def __init__(self, directory: Path, cap: int | None = None) -> None:
        self.directory = Path(directory)
        self.cap = size_cap() if cap is None else cap
        self._known: set[str] = set()

    def path(self, key: str) -> Path:
        return self.directory / key[:2] / key[2:]

    def has(self, key: str) -> bool:
        if key in self._known:
            return True
        if self.path(key).exists():
            self._known.add(key)
            return True
        return False

    def put_bytes(self, data: bytes) -> str:
        key = hash_bytes(data)
        if not self.has(key):
            self._write(key, data)
        return key

    def put_if_small(self, key: str, data: bytes) -> bool:
        """Store already-hashed content unless it exceeds the cap; True when it is restorable."""
        if len(data) > self.cap:
            return False
        if not self.has(key):
            self._write(key, data)
        return True

    def get(self, key: str) -> bytes:
        return self.path(key).read_bytes()

    def _write(self, key: str, data: bytes) -> None:
        final = self.path(key)
        final.parent.mkdir(parents=True, exist_ok=True)
        temp = final.parent / f".tmp-{os.getpid()}-{key[2:10]}"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o444)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.replace(temp, final)
        self._known.add(key)


def hash_file(path: str | bytes | Path, size: int) -> tuple[str, bytes | None]:
    """Hash a regular file; also return its bytes when small enough to keep in memory."""
    with open(path, "rb") as handle:
        if size <= 4 * CHUNK:
            data = handle.read()
            return hash_bytes(data), data
        digest = xxhash.xxh3_128()
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
        return digest.hexdigest(), None
