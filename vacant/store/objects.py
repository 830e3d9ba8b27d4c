"""Content-addressed blob store (`objects/` in the state directory), keyed by xxh3-128, each blob written once.

Two layouts, like git's loose objects and packs. A hook that stores a few new contents writes
loose blobs (`ab/cdef…`, temp file + rename). A full scan stores everything new in one pack
(`pack/<name>.pack` + `.idx`): one file per blob would cost more than the whole scan (creating
40,000 files takes seconds on its own). A pack becomes visible only when its index is renamed
into place, so a reader never sees half of one. Stdlib + xxhash only (hot path).
"""

from __future__ import annotations

from vacant.core import leanjson as json  # not `import json`: 13 ms CPU of each hook call (vacant/hook/lean.py)
import os
from pathlib import Path

from vacant.core.leanstd import contextmanager
from vacant.core.safeio import open_regular

TYPE_CHECKING = False  # typing's, without importing typing: that costs each hook call 15 ms CPU (hook/lean.py)
if TYPE_CHECKING:
    from collections.abc import Iterator

DEFAULT_SIZE_CAP = 16 * 1024 * 1024
# Owner-only: blobs hold file contents (docs/STORAGE.md); loose blobs are also read-only.
DIR_MODE, PACK_MODE, BLOB_MODE = 0o700, 0o600, 0o400
CHUNK = 1 << 20


class TamperedObject(ValueError):
    """A stored blob's bytes no longer match its key."""


def size_cap() -> int:
    try:
        return int(os.environ.get("VACANT_OBJECT_CAP", DEFAULT_SIZE_CAP))
    except ValueError:
        return DEFAULT_SIZE_CAP


def hash_bytes(data: bytes) -> str:
    import xxhash  # on the first hash: a call that changed no file (a Read, any Pre) never loads it

    return xxhash.xxh3_128_hexdigest(data)


class _PackWriter:
    def __init__(self, directory: str) -> None:
        os.makedirs(directory, mode=DIR_MODE, exist_ok=True)
        self.name = f"{os.getpid()}-{os.urandom(6).hex()}"
        self.temp = os.path.join(directory, f".{self.name}.pack.tmp")
        self.final = os.path.join(directory, f"{self.name}.pack")
        self.handle = os.fdopen(os.open(self.temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PACK_MODE), "wb")
        self.index: dict[str, list[int]] = {}

    def add(self, key: str, data: bytes) -> None:
        self.index[key] = [self.handle.tell(), len(data)]
        self.handle.write(data)

    def finish(self) -> dict[str, list[int]]:
        self.handle.close()
        if not self.index:
            os.unlink(self.temp)
            return {}
        os.replace(self.temp, self.final)
        idx_temp = self.final[:-5] + ".idx.tmp"
        with os.fdopen(os.open(idx_temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PACK_MODE), "w") as handle:
            handle.write(json.dumps(self.index, separators=(",", ":")))
        os.replace(idx_temp, self.final[:-5] + ".idx")  # the pack is visible from here on
        return self.index


class ObjectStore:
    def __init__(self, directory: Path, cap: int | None = None) -> None:
        self.root = str(directory)
        self.directory = Path(directory)
        self.cap = size_cap() if cap is None else cap
        self._known: set[str] = set()
        self._fanout: set[str] = set()
        self._packs: dict[str, tuple[str, int, int]] | None = None  # key -> (pack path, offset, length)
        self._writer: _PackWriter | None = None

    def _loose(self, key: str) -> str:
        return f"{self.root}/{key[:2]}/{key[2:]}"  # str, not Path: this runs once per blob

    def path(self, key: str) -> Path:
        """Where the loose copy of a blob lives (it may be in a pack instead)."""
        return Path(self._loose(key))

    def _pack_index(self) -> dict[str, tuple[str, int, int]]:
        if self._packs is None:
            self._packs = {}
            pack_dir = os.path.join(self.root, "pack")
            for name in sorted(os.listdir(pack_dir)) if os.path.isdir(pack_dir) else ():
                if name.endswith(".idx"):
                    pack = os.path.join(pack_dir, name[:-4] + ".pack")
                    with open(os.path.join(pack_dir, name)) as handle:
                        for key, (offset, length) in json.loads(handle.read()).items():
                            self._packs[key] = (pack, offset, length)
        return self._packs

    def has(self, key: str) -> bool:
        if key in self._known or os.path.exists(self._loose(key)):
            self._known.add(key)
            return True
        return key in self._pack_index()

    def put_bytes(self, data: bytes) -> str:
        key = hash_bytes(data)
        self.put_if_small(key, data, force=True)
        return key

    def put_if_small(self, key: str, data: bytes, force: bool = False) -> bool:
        """Store already-hashed content unless it exceeds the cap; True when it is restorable."""
        if len(data) > self.cap and not force:
            return False
        if key in self._known:
            return True
        if self._writer is not None:
            if not self.has(key) and key not in self._writer.index:
                self._writer.add(key, data)
            return True
        if not os.path.exists(self._loose(key)):  # a loose copy of a packed blob is harmless
            self._write(key, data)
        self._known.add(key)
        return True

    @contextmanager
    def packing(self) -> Iterator[None]:
        """Everything stored inside the block goes into one new pack."""
        self._writer = _PackWriter(os.path.join(self.root, "pack"))
        try:
            yield
        finally:
            writer, self._writer = self._writer, None
            written = writer.finish()
            if self._packs is not None:
                self._packs.update((key, (writer.final, offset, length)) for key, (offset, length) in written.items())

    def get(self, key: str) -> bytes:
        """The blob stored under `key`; TamperedObject when its bytes no longer hash to it (an
        object edited behind vacant's back never reaches a report or a restore)."""
        data = self._raw(key)
        if hash_bytes(data) != key:
            raise TamperedObject(f"object {key} in {self.root} no longer matches its content hash: it was edited "
                                 "behind vacant's back, so nothing is shown or restored from it")
        return data

    def _raw(self, key: str) -> bytes:
        try:
            with open(self._loose(key), "rb") as handle:
                return handle.read()
        except FileNotFoundError:
            located = self._pack_index().get(key)
            if located is None:
                raise
            pack, offset, length = located
            with open(pack, "rb") as handle:
                handle.seek(offset)
                return handle.read(length)

    def tampered(self) -> list[str]:
        """Every stored key whose bytes no longer hash to it (`vacant verify`)."""
        keys = [f"{d.name}{f.name}" for d in Path(self.root).iterdir() if d.is_dir() and len(d.name) == 2
                for f in d.iterdir() if not f.name.startswith(".")] if os.path.isdir(self.root) else []
        return [key for key in sorted(set(keys) | set(self._pack_index())) if hash_bytes(self._raw(key)) != key]

    def _write(self, key: str, data: bytes) -> None:
        fanout = f"{self.root}/{key[:2]}"
        if fanout not in self._fanout:
            os.makedirs(fanout, mode=DIR_MODE, exist_ok=True)
            self._fanout.add(fanout)
        temp = f"{fanout}/.tmp-{os.getpid()}-{key[2:10]}"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, BLOB_MODE)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.replace(temp, self._loose(key))


def hash_file(path: str | bytes | Path, size: int) -> tuple[str, bytes | None]:
    """Hash a regular file; also return its bytes when small enough to keep in memory."""
    import xxhash  # see hash_bytes

    with os.fdopen(open_regular(path, follow=False), "rb") as handle:  # a FIFO swapped in: refused, not read
        if size <= 4 * CHUNK:
            data = handle.read(4 * CHUNK + 1)
            if len(data) <= 4 * CHUNK:
                return hash_bytes(data), data
            digest = xxhash.xxh3_128(data)  # it grew since the stat: stream the rest
            while chunk := handle.read(CHUNK):
                digest.update(chunk)
            return digest.hexdigest(), None
        digest = xxhash.xxh3_128()
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
        return digest.hexdigest(), None
