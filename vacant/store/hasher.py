"""The incremental workspace hasher: manifest `path -> entry`, git's index rule, racy-git rule.

An entry is `[kind, size, mtime_ns, hash, mode]`; kind is `f` (file), `l` (symlink: the hash is
of its target text), `d` (directory) or `s` (FIFO, socket, device: recorded, never read).

A file whose size, mtime_ns and mode match the index reuses its hash. Racy-git rule: an entry
whose mtime is not older than the filesystem clock at the start of the scan that recorded it is
re-hashed, since a same-size rewrite within that timestamp tick would otherwise be missed. Like
git (which compares ctime and inode too), an entry whose ctime is not older than that clock is
re-hashed as well: a same-size file renamed over it, or a rewrite whose mtime a tool restored
(`cp -p`, `tar`, `rsync -t`), changes nothing but the ctime.

Ignore rules (.gitignore at every level, .vacantignore at the root) are only matched for paths
the index does not already hold, unless an ignore file changed: that keeps incremental scans free
of pattern matching. `pathspec` is imported lazily, only when a path must really be matched.
Stdlib + xxhash on the hot path.
"""

from __future__ import annotations

from vacant.core import leanjson as json  # not `import json`: 13 ms CPU of each hook call (vacant/hook/lean.py)
import os
import stat
import sys
import time
from pathlib import Path

from vacant.core.leanstd import nullcontext
from vacant.core.atomic import atomic_write
from vacant.core.locations import SKIP_NAMES
from vacant.core.safeio import open_regular
from vacant.store import exclude
from vacant.store.objects import ObjectStore, hash_bytes, hash_file

TYPE_CHECKING = False  # typing's, without importing typing: that costs each hook call 15 ms CPU (hook/lean.py)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    Entry = list[Any]  # [kind, size, mtime_ns, hash | None, mode]
else:
    Entry = list
IGNORE_FILES = (".gitignore", ".vacantignore")
INDEX_VERSION = 2


class Index:
    """The stat cache: a main file rewritten by full scans, plus a small overlay for scoped ones.

    A Write/Edit hook must not pay for the whole workspace: a scoped scan looks its paths up in
    the main file's raw bytes (no parse) and appends only its own paths to the overlay journal.
    The main file is written to a temp file and renamed into place. Each entry remembers the filesystem clock of the scan that
    recorded it, for the racy-git rule.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.overlay_path = self.path.with_name(self.path.name + ".overlay")
        self.rebuilt: str | None = None  # why the index was discarded, when it was
        self.clock_ns = 0
        self.ignore_stamp: dict[str, list[int]] = {}
        self._raw: bytes | None = None
        self._entries: dict[str, Entry] | None = None
        self.overlay: dict[str, list[Any]] = self._load_overlay()  # rel -> [entry | None, clock_ns]

    @classmethod
    def load(cls, path: Path) -> "Index":
        return cls(path)

    def _discard(self, why: str) -> None:
        print(f"vacant: index {self.path} is unreadable ({why}); rebuilding it", file=sys.stderr)
        self.rebuilt = why

    def _load_overlay(self) -> dict[str, list[Any]]:
        """The overlay journal: one JSON object per line, later lines over earlier ones (a file of
        one line is the whole-object form a compaction writes). A last piece without its newline
        is an append cut short by a crash: it alone is skipped, with a warning."""
        try:
            raw = self.overlay_path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as error:
            self._discard(str(error))
            return {}
        merged: dict[str, list[Any]] = {}
        pieces = raw.split(b"\n")
        whole = [piece.strip() for piece in pieces if piece.strip()]
        if all(line[:1] == b"{" and line[-1:] == b"}" for line in whole):
            # every append whole (the common case): all lines parsed at once, as one JSON array, in
            # one call instead of one a line; any doubt (a parse error, a count that differs)
            # takes the line-by-line reading below, which says what is wrong where
            try:
                parts = json.loads(b"[" + b",".join(whole) + b"]")
            except ValueError:
                parts = None
            if isinstance(parts, list) and len(parts) == len(whole) and all(isinstance(part, dict) for part in parts):
                for part in parts:
                    merged.update(part)
                return merged
        for number, piece in enumerate(pieces):
            if not piece.strip():
                continue
            try:
                part = json.loads(piece)
                if not isinstance(part, dict):
                    raise ValueError("overlay line is not an object")
            except ValueError as error:
                self._discard(str(error))
                if number == len(pieces) - 1:
                    continue  # the torn last append: the updates before it stand
                return {}
            merged.update(part)
        return merged

    def _load_raw(self) -> bytes:
        if self._raw is None:
            try:
                self._raw = self.path.read_bytes()
                header_end = self._raw.index(b"\n")
                header = json.loads(self._raw[:header_end])
                if header.get("version") != INDEX_VERSION:
                    raise ValueError("index version changed")
                self.clock_ns = int(header["clock_ns"])
                self.ignore_stamp = header.get("ignore_stamp", {})
            except FileNotFoundError:
                self._raw = b""
            except (OSError, ValueError, KeyError, TypeError) as error:
                self._discard(str(error))
                self._raw = b""
        return self._raw

    def get(self, rel: str) -> tuple[Entry | None, int]:
        """One path's entry and the clock of the scan that recorded it, without a full parse."""
        if rel in self.overlay:
            entry, clock = self.overlay[rel]
            return entry, clock
        if self._entries is not None:
            return self._entries.get(rel), self.clock_ns
        raw = self._load_raw()
        needle = json.dumps(rel).encode() + b":"
        at = raw.find(b"\n")
        while True:  # a key starts right after `{` or `,`; elsewhere the needle is inside a key
            at = raw.find(needle, at + 1)
            if at < 0:
                return None, self.clock_ns
            if raw[at - 1 : at] in (b"{", b","):
                break
        start = at + len(needle)
        try:
            return json.loads(raw[start : raw.index(b"]", start) + 1]), self.clock_ns
        except ValueError:  # a damaged main file: the full parse discards it with a warning
            return self.entries().get(rel), self.clock_ns

    def entries(self) -> dict[str, Entry]:
        """Every entry (main file merged with the overlay)."""
        if self._entries is None:
            raw = self._load_raw()
            try:
                self._entries = json.loads(raw[raw.index(b"\n") + 1 :]) if raw else {}
            except ValueError as error:
                self._discard(str(error))
                self._entries = {}
        merged = dict(self._entries)
        for rel, (entry, _clock) in self.overlay.items():
            if entry is None:
                merged.pop(rel, None)
            else:
                merged[rel] = entry
        return merged

    def clock_of(self, rel: str) -> int:
        return self.overlay[rel][1] if rel in self.overlay else self.clock_ns

    def replace_all(self, entries: dict[str, Entry], clock_ns: int, ignore_stamp: dict[str, list[int]]) -> None:
        """After a full scan: a new main file, and no overlay."""
        header = {"version": INDEX_VERSION, "clock_ns": clock_ns, "ignore_stamp": ignore_stamp}
        body = json.dumps(header).encode() + b"\n" + json.dumps(entries, separators=(",", ":")).encode()
        atomic_write(self.path, body)
        self._raw, self._entries, self.clock_ns, self.ignore_stamp = body, entries, clock_ns, ignore_stamp
        self.overlay = {}
        try:
            self.overlay_path.unlink()
        except FileNotFoundError:
            pass

    def update(self, changes: dict[str, Entry | None], clock_ns: int) -> None:
        """After a scoped scan: record the scanned paths in the overlay, by appending one line to
        its journal (no rename: on ext4 a rename over a file flushes the new file's data first,
        which costs more than the rest of a Write hook's scan). Past OVERLAY_COMPACT bytes the
        journal is rewritten whole, as one line."""
        part = {rel: [entry, clock_ns] for rel, entry in changes.items()}
        self.overlay.update(part)
        line = json.dumps(part, separators=(",", ":")).encode() + b"\n"
        fd = os.open(self.overlay_path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            size = os.fstat(fd).st_size
            if size + len(line) > OVERLAY_COMPACT:
                os.close(fd)
                fd = -1
                atomic_write(self.overlay_path, json.dumps(self.overlay, separators=(",", ":")).encode() + b"\n")
                return
            if size and os.pread(fd, 1, size - 1) != b"\n":
                os.ftruncate(fd, _torn_tail_start(fd, size))  # an append a crash cut short: drop it
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view):]
        finally:
            if fd >= 0:
                os.close(fd)


# bytes of overlay journal before it is rewritten whole (one line per distinct path): a call
# answered in-process reads the whole journal, so it is kept small
OVERLAY_COMPACT = 64 << 10


def _torn_tail_start(fd: int, size: int) -> int:
    """Where the journal's last, unterminated piece starts (just after the last newline)."""
    end = size
    while end > 0:
        start = max(0, end - (1 << 16))
        at = os.pread(fd, end - start, start).rfind(b"\n")
        if at >= 0:
            return start + at + 1
        end = start
    return 0


class ScanResult:
    """What one scan saw: the delta against the index, and how much work it took."""

    def __init__(self) -> None:
        self.added: dict[str, Entry] = {}
        self.changed: dict[str, Entry] = {}
        self.removed: list[str] = []
        self.files = 0
        self.hashed = 0
        self.reused = 0
        self.seconds = 0.0
        self.unrestorable: list[str] = []
        self.errors: list[str] = []

    @property
    def empty(self) -> bool:
        return not (self.added or self.changed or self.removed)

    def delta(self) -> dict[str, object]:
        return {"added": self.added, "changed": self.changed, "removed": self.removed}


def filesystem_clock(state: Path) -> int:
    """The filesystem's own notion of now (its timestamps may lag time.time_ns())."""
    probe = state / "clock"
    try:
        os.utime(probe)
    except FileNotFoundError:
        probe.touch()
    return probe.stat().st_mtime_ns


class _Ignores:
    """Per-directory gitignore specs, built lazily; matching is skipped for indexed paths."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.specs: dict[str, object] = {}
        self.seen_stamp: dict[str, list[int]] = {}

    def note_ignore_file(self, rel: str, st: os.stat_result) -> None:
        self.seen_stamp[rel] = [st.st_size, st.st_mtime_ns]

    def spec(self, reldir: str) -> Any:
        if reldir not in self.specs:
            self.specs[reldir] = self._build(reldir)
        return self.specs[reldir]

    def _build(self, reldir: str) -> Any:
        lines: list[str] = []
        names = IGNORE_FILES if reldir == "" else IGNORE_FILES[:1]
        for name in names:
            try:
                lines += (self.root / reldir / name).read_text(errors="replace").splitlines()
            except OSError:
                continue
        if not lines:
            return None
        import pathspec  # lazy: only when a path really has to be matched

        return pathspec.GitIgnoreSpec.from_lines(lines)

    def ignored(self, rel: str, is_dir: bool) -> bool:
        verdict = None
        parts = rel.split("/")
        for depth in range(len(parts)):
            reldir = "/".join(parts[:depth])
            spec = self.spec(reldir)
            if spec is None:
                continue
            sub = "/".join(parts[depth:]) + ("/" if is_dir else "")
            include = spec.check_file(sub).include
            if include is not None:
                verdict = include
        return verdict is True


def leaves_out(root: Path) -> Callable[[str, bool], bool]:
    """Whether the record leaves a workspace-relative path (and all below it) out: `.git` at any
    depth, the state directory at the top, what the ignore files ignore, what `[store] exclude`
    keeps the content of. What the walled runner shows from the live workspace over a rebuilt
    state (vacant/core/sandbox.py)."""
    ignores = _Ignores(Path(root))
    exclusions = exclude.patterns(Path(root))

    def left_out(rel: str, is_dir: bool) -> bool:
        name = rel.rsplit("/", 1)[-1]
        if name == ".git" or ("/" not in rel and name in SKIP_NAMES):
            return True
        if exclusions and any(pattern.match(rel) for pattern in exclusions):
            return True
        return ignores.ignored(rel, is_dir)
    return left_out


class _NoIgnores(_Ignores):
    """For scanning a scratch reconstruction: every path counts, whatever its ignore files say."""

    def ignored(self, rel: str, is_dir: bool) -> bool:
        return False


class Scanner:
    def __init__(
        self, root: Path, index: Index, store: ObjectStore | None, state: Path, use_ignores: bool = True
    ) -> None:
        self.root = Path(root)
        self.index = index
        self.store = store
        self.state = state
        self.use_ignores = use_ignores
        self.exclude = exclude.patterns(self.root) if store is not None else ()  # [store] exclude

    def scan(self, paths: Iterable[str] | None = None, log: object = None) -> ScanResult:
        """Scan the whole workspace (paths=None) or only the given workspace-relative paths.
        `log`: the step log a scanner standing in for lost events reports its rescan to (the
        daemon's watched scanner); this one reads the tree itself and loses nothing."""
        started = time.perf_counter()
        clock = filesystem_clock(self.state)
        if paths is None:
            result = self._full_scan(clock)
        else:
            result = self._scoped_scan(sorted({rel for rel in map(_clean, paths) if rel is not None}), clock)
        result.seconds = time.perf_counter() - started
        return result

    def _ignores(self) -> _Ignores:
        return _Ignores(self.root) if self.use_ignores else _NoIgnores(self.root)

    def _full_scan(self, clock: int) -> ScanResult:
        old = self.index.entries()
        ignores, result = self._ignores(), ScanResult()
        seen: dict[str, Entry] = {}
        with self.store.packing() if self.store is not None else nullcontext():
            self._walk("", ignores, seen, result, old, trust_index=True)
        # An ignore file changed, or was written in the last scan's own tick (racy-git again).
        racy = any(mtime >= self.index.clock_ns for _size, mtime in ignores.seen_stamp.values())
        if (ignores.seen_stamp != self.index.ignore_stamp or racy) and old:
            ignores, seen, result = self._ignores(), {}, ScanResult()  # an ignore file changed:
            self._walk("", ignores, seen, result, old, trust_index=False)  # match every path again
        _diff(old, seen, result, in_scope=lambda rel: True)
        unchanged = result.empty and not result.hashed and ignores.seen_stamp == self.index.ignore_stamp
        if not (unchanged and not self.index.overlay):  # nothing new: the index on disk still holds
            self.index.replace_all(seen, clock, ignores.seen_stamp)
        return result

    def _scoped_scan(self, rels: list[str], clock: int) -> ScanResult:
        ignores, result = self._ignores(), ScanResult()
        seen: dict[str, Entry] = {}
        old: dict[str, Entry] = {}
        for rel in rels:
            entry, _ = self.index.get(rel)
            is_dir = os.path.isdir(os.path.join(self.root, rel)) and not os.path.islink(os.path.join(self.root, rel))
            if is_dir or (entry is not None and entry[0] == "d"):
                everything = self.index.entries()  # a directory: its whole subtree is in scope
                old.update((k, v) for k, v in everything.items() if _scope_test([rel])(k))
            elif entry is not None:
                old[rel] = entry
            self._scan_path(rel, ignores, seen, result, old)
        for ancestor in set(seen) - set(old):
            entry, _ = self.index.get(ancestor)
            if entry is not None:
                old[ancestor] = entry
        _diff(old, seen, result, in_scope=_scope_test(rels))
        changes: dict[str, Entry | None] = {rel: seen[rel] for rel in seen}
        changes.update((rel, None) for rel in result.removed)
        self.index.update(changes, clock)
        return result

    # -- walking ---------------------------------------------------------------------------

    def _walk(
        self, top: str, ignores: _Ignores, seen: dict[str, Entry], result: ScanResult, old: dict[str, Entry],
        trust_index: bool
    ) -> None:
        stack = [top]
        while stack:
            current = stack.pop()
            absdir = os.path.join(self.root, current) if current else str(self.root)
            try:
                listing = list(os.scandir(absdir))
            except OSError as error:
                result.errors.append(f"{current or '.'}: {error.strerror}")
                continue
            for dirent in listing:
                name = dirent.name
                if name in SKIP_NAMES and (name == ".git" or current == ""):
                    continue
                rel = f"{current}/{name}" if current else name
                try:
                    st = dirent.stat(follow_symlinks=False)
                except OSError as error:  # vanished between listing and stat
                    result.errors.append(f"{rel}: {error.strerror}")
                    continue
                if name in IGNORE_FILES and stat.S_ISREG(st.st_mode):
                    ignores.note_ignore_file(rel, st)
                is_dir = stat.S_ISDIR(st.st_mode)
                if not (trust_index and rel in old) and ignores.ignored(rel, is_dir):
                    continue
                if is_dir:
                    seen[rel] = ["d", 0, 0, None, stat.S_IMODE(st.st_mode)]
                    stack.append(rel)
                else:
                    self._record(rel, dirent.path, st, seen, result, old.get(rel))

    def _scan_path(self, rel: str, ignores: _Ignores, seen: dict[str, Entry], result: ScanResult,
                   old: dict[str, Entry]) -> None:
        parts = rel.split("/")
        if parts[0] in SKIP_NAMES or ".git" in parts:
            return
        for depth in range(1, len(parts)):  # ancestors a Write may have created
            ancestor = "/".join(parts[:depth])
            try:
                st = os.lstat(self.root / ancestor)
            except OSError:
                return
            if not stat.S_ISDIR(st.st_mode):
                return
            if self.index.get(ancestor)[0] is None and ignores.ignored(ancestor, True):
                return  # an indexed directory is known not to be ignored: no pattern matching
            seen[ancestor] = ["d", 0, 0, None, stat.S_IMODE(st.st_mode)]
        absolute = os.path.join(self.root, rel)
        try:
            st = os.lstat(absolute)
        except OSError:
            return
        is_dir = stat.S_ISDIR(st.st_mode)
        if rel not in old and ignores.ignored(rel, is_dir):
            return
        if is_dir:
            seen[rel] = ["d", 0, 0, None, stat.S_IMODE(st.st_mode)]
            self._walk(rel, ignores, seen, result, old, trust_index=True)
        else:
            self._record(rel, absolute, st, seen, result, old.get(rel))

    def _record(
        self, rel: str, absolute: str, st: os.stat_result, seen: dict[str, Entry], result: ScanResult, old: Entry | None
    ) -> None:
        mode = stat.S_IMODE(st.st_mode)
        if stat.S_ISLNK(st.st_mode):
            try:
                target = os.readlink(absolute)
            except OSError:
                return
            link = os.fsencode(target)
            key = hash_bytes(link)
            if self.store is not None:
                self.store.put_if_small(key, link)
            seen[rel] = ["l", len(link), st.st_mtime_ns, key, mode]
            return
        if not stat.S_ISREG(st.st_mode):
            seen[rel] = ["s", 0, st.st_mtime_ns, None, mode]
            return
        result.files += 1
        if (
            old is not None
            and old[0] == "f"
            and old[1] == st.st_size
            and old[2] == st.st_mtime_ns
            and old[4] == mode
            # racy-git: not touched in (or after) the tick of the scan that recorded it; ctime too,
            # or a same-size file renamed over it, or a restored mtime, would go unseen
            and max(st.st_mtime_ns, st.st_ctime_ns) < self.index.clock_of(rel)
        ):
            seen[rel] = old
            result.reused += 1
            return
        try:
            key, data = hash_file(absolute, st.st_size)
        except OSError as error:  # vanished or unreadable mid-scan: recorded as an error only
            result.errors.append(f"{rel}: {error.strerror}")
            return
        result.hashed += 1
        if self.exclude and any(pattern.match(rel) for pattern in self.exclude):
            result.unrestorable.append(rel)  # hashed, never stored
        elif self.store is not None and not self._keep(key, data, absolute, st.st_size):
            result.unrestorable.append(rel)
        seen[rel] = ["f", st.st_size, st.st_mtime_ns, key, mode]

    def _keep(self, key: str, data: bytes | None, absolute: str, size: int) -> bool:
        if self.store is None or size > self.store.cap:
            return False
        if data is None:
            try:
                with os.fdopen(open_regular(absolute, follow=False), "rb") as handle:
                    data = handle.read(size + 1)  # bounded: a file that grew since fails the hash check
            except OSError:  # gone, or no longer a regular file: not kept (the next scan sees it)
                return False
            if hash_bytes(data) != key:
                return False  # changed while we read it: the next scan will see it
        return self.store.put_if_small(key, data)


def _diff(old: dict[str, Entry], seen: dict[str, Entry], result: ScanResult, in_scope: Callable[[str], bool]) -> None:
    for rel, entry in seen.items():
        before = old.get(rel)
        if before is entry:  # reused as is from the index
            continue
        if before is None:
            result.added[rel] = entry
        elif _differs(before, entry):
            result.changed[rel] = entry
    result.removed = sorted(rel for rel in old if rel not in seen and in_scope(rel))


def _differs(old: Entry, new: Entry) -> bool:
    if old[0] != new[0]:
        return True
    if new[0] == "d":
        return bool(old[4] != new[4])
    return bool(old[1] != new[1] or old[3] != new[3] or old[4] != new[4])


def _scope_test(scope: list[str]) -> Callable[[str], bool]:
    prefixes = tuple(prefix + "/" for prefix in scope)
    exact = set(scope)
    return lambda rel: rel in exact or rel.startswith(prefixes)


def _clean(path: str) -> str | None:
    """A workspace-relative POSIX path, or None when it points outside the workspace."""
    norm = os.path.normpath(path).replace(os.sep, "/")
    if norm in ("", ".") or norm.startswith("../") or norm == ".." or os.path.isabs(norm):
        return None
    return norm


def relative_to_root(root: Path, path: str) -> str | None:
    """Map a tool's (usually absolute) path into the workspace, or None if it lies outside."""
    absolute = os.path.normpath(os.path.join(root, path))
    rel = os.path.relpath(absolute, root)
    return _clean(rel)
