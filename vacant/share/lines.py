"""Line data of a run record (format 2): for every path a run changed, keyed hashes of its lines
at the run's baseline and an edit script per recorded change, never the lines themselves.

Contract:
- The key is the repository's root commit id (`line_key`); a line's hash is BLAKE2b (8 bytes,
  16 hex digits) keyed with its raw bytes, over the line as `vacant blame` compares it
  (vacant.core.linecarry.text_lines, without whitespace: line_item). docs/SHARE.md says what that does and does not hide.
- Versions come from the run's object store exactly as local blame reads them
  (vacant.store.loaded): a version the store did not keep has `hunks` null, and the next edit
  script starts from the empty file, as blame's walk does after such a gap.
- Bounded: a path with a version over MAX_VERSION_LINES lines or a NUL byte, or one that would
  take the record past MAX_RECORD_HASHES hashes, is listed with `omitted` and no line data.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from vacant.core.linecarry import hunks, line_item, text_lines
from vacant.share.gitstore import GitStore
from vacant.share.records import (
    LINE_HASH_HEX,
    MAX_RECORD_HASHES,
    MAX_VERSION_LINES,
    Hunk,
    LineEdit,
    PathLines,
)
from vacant.store.loaded import LoadedRun, Unrestorable, file_bytes, path_entries

Digest = Callable[[str], str]


def line_key(store: GitStore) -> str | None:
    """The root commit keying the line hashes: the smallest of HEAD's parentless commits (None
    when there is no commit yet)."""
    proc = store.git("rev-list", "--max-parents=0", "HEAD", ok=(0, 128))
    roots = sorted(proc.stdout.decode().split()) if proc.returncode == 0 else []
    return roots[0] if roots else None


def digest_for(key: str) -> Digest:
    """The keyed line hash (memoised: files repeat lines, and versions repeat whole files)."""
    raw = bytes.fromhex(key)
    memo: dict[str, str] = {}

    def digest(line: str) -> str:
        found = memo.get(line)
        if found is None:
            found = hashlib.blake2b(line_item(line).encode("utf-8", "surrogatepass"), key=raw,
                                    digest_size=LINE_HASH_HEX // 2).hexdigest()
            memo[line] = found
        return found
    return digest


def changed_paths(run: LoadedRun) -> list[str]:
    """Every path a change record of the run touched (tool steps, groups, out-of-band), sorted."""
    found: set[str] = set()
    for change in run.changes:
        found.update(change["added"], change["changed"], change["removed"])
    return sorted(found)


def _version(run: LoadedRun, entry: list | None) -> list[str] | None | str:
    """A version's lines; None when the store did not keep it; 'binary' when it holds a NUL byte."""
    try:
        data = file_bytes(run.store, entry)
    except Unrestorable:
        return None
    if data is not None and b"\0" in data:
        return "binary"
    return text_lines(data)


def _edit(run: LoadedRun, change: dict) -> tuple[int | None, list[int]]:
    """Who made a change, as local blame names it (vacant.show.blame.step_author): a step of the
    run, or nobody known (null) with the steps that were open."""
    if change["step"] is not None and change["step"] in run.view.steps:
        return change["step"], []
    return None, [int(n) for n in change.get("open_steps") or ()]


def path_lines(run: LoadedRun, path: str, digest: Digest, budget: int,
               committed: dict[str, str]) -> tuple[PathLines, int]:
    """One path's line data and how many hashes it takes (0 when omitted). `committed`: path ->
    blob id in the run's starting commit; a baseline that is that blob is named, not listed."""
    entries = path_entries(run, path)
    versions = [_version(run, entry) for _, entry in entries]
    known = [v for v in versions if isinstance(v, list)]
    if any(v == "binary" for v in versions):
        return PathLines(path, None, None, [], "binary"), 0
    if any(len(v) > MAX_VERSION_LINES for v in known):
        return PathLines(path, None, None, [], "lines-cap"), 0
    hashed = [None if v is None else [digest(line) for line in v] for v in versions]
    blob = committed.get(path)
    by_blob = blob is not None and isinstance(versions[0], list) and blob == _blob_id(run, entries[0][1], blob)
    edits, used = [], 0 if by_blob else len(hashed[0] or [])
    previous: list[str] = hashed[0] or []
    for (change, _), new in zip(entries[1:], hashed[1:]):
        assert change is not None  # only the first entry (the baseline) has none
        step, open_steps = _edit(run, change)
        script = None if new is None else [Hunk(h.start, h.end, h.items) for h in hunks(previous, new)]
        used += sum(len(h.lines) for h in script or ())
        edits.append(LineEdit(step, open_steps, script))
        previous = new or []
    if used > budget:
        return PathLines(path, None, None, [], "record-cap"), 0
    if by_blob:
        return PathLines(path, None, blob, edits, None), used
    return PathLines(path, hashed[0], None, edits, None), used


def _blob_id(run: LoadedRun, entry: list | None, like: str) -> str | None:
    """The git blob id of a version's bytes, in the object format of `like` (sha1 or sha256)."""
    data = file_bytes(run.store, entry)
    if data is None:
        return None
    return hashlib.new("sha1" if len(like) == 40 else "sha256", b"blob %d\0" % len(data) + data).hexdigest()


def committed_blobs(store: GitStore | None, commit: str | None, paths: list[str]) -> dict[str, str]:
    """path -> blob id of each of `paths` in `commit` ({} without a store or commit, or when git
    does not know the commit)."""
    if store is None or commit is None or not paths:
        return {}
    found: dict[str, str] = {}
    for start in range(0, len(paths), 500):  # bounded command lines
        proc = store.git("--literal-pathspecs", "ls-tree", "-r", "-z", "--full-tree", commit, "--",
                         *paths[start:start + 500], ok=(0, 128))
        for item in proc.stdout.split(b"\0") if proc.returncode == 0 else ():
            head, _, name = item.partition(b"\t")
            parts = head.decode(errors="replace").split(" ")
            if len(parts) == 3 and parts[1] == "blob":
                found[name.decode(errors="replace")] = parts[2]
    return found


def run_lines(run: LoadedRun, key: str | None, only: str | None = None,
              store: GitStore | None = None) -> list[PathLines]:
    """The line data of every path the run changed (or of `only`), sorted by path; [] without a
    key. With `store`, a baseline that is the path as committed in the run's commit is named by
    its blob id instead of listed."""
    if key is None:
        return []
    digest = digest_for(key)
    budget = MAX_RECORD_HASHES
    paths = [path for path in changed_paths(run) if only is None or path == only]
    committed = committed_blobs(store, run.start().get("commit"), paths)
    found = []
    for path in paths:
        item, used = path_lines(run, path, digest, budget, committed)
        budget -= used
        found.append(item)
    return found
