"""Workspace states: manifests folded from recorded deltas, and their reconstruction.

`materialize(target, into=DIR)` rebuilds a recorded state byte for byte in a scratch directory;
given the state the directory already holds, it applies only the difference. It refuses to work
inside the live workspace: reconstruction never touches a user's files.
"""

from __future__ import annotations

from vacant.core import leanjson as json  # not `import json`: 13 ms CPU of each hook call (vacant/hook/lean.py)
import os
from pathlib import Path

from vacant.core.locations import ensure_state_dir
from vacant.store.hasher import Entry, Index, Scanner
from vacant.store.objects import ObjectStore

TYPE_CHECKING = False  # typing's, without importing typing: that costs each hook call 15 ms CPU (hook/lean.py)
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

Manifest = dict[str, Entry]


class ReconstructionError(RuntimeError):
    pass


def open_scanner(root: Path, state: Path | None = None) -> Scanner:
    """The workspace's scanner; `state`: its state directory when the caller holds it."""
    state = ensure_state_dir(root) if state is None else state
    return Scanner(root, Index.load(state / "index"), ObjectStore(state / "objects"), state)


def store_for(root: Path) -> ObjectStore:
    return ObjectStore(ensure_state_dir(root) / "objects")


def save_manifest(store: ObjectStore, manifest: Manifest) -> str:
    return store.put_bytes(json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode())


def load_manifest(store: ObjectStore, key: str) -> Manifest:
    manifest: Manifest = json.loads(store.get(key))
    return manifest


def apply_delta(manifest: Manifest, delta: dict[str, Any]) -> Manifest:
    result = dict(manifest)
    for rel in delta.get("removed", ()):
        result.pop(rel, None)
    result.update(delta.get("added", {}))
    result.update(delta.get("changed", {}))
    return result


def diff(old: Manifest, new: Manifest) -> dict[str, Any]:
    """The delta that turns `old` into `new` (same shape as a scan's delta)."""
    added = {rel: entry for rel, entry in new.items() if rel not in old}
    changed = {rel: entry for rel, entry in new.items() if rel in old and _content(old[rel]) != _content(entry)}
    removed = sorted(rel for rel in old if rel not in new)
    return {"added": added, "changed": changed, "removed": removed}


def _content(entry: Entry) -> tuple[object, ...]:
    kind, size, _mtime, key, mode = entry
    return (kind, None if kind == "d" else size, key, mode)


def materialize(
    target: Manifest, into: Path, store: ObjectStore, current: Manifest | None = None, live: Path | None = None
) -> list[str]:
    """Make `into` hold exactly `target`; returns the paths that could not be restored."""
    into = Path(into).resolve()
    if live is not None and _inside(into, Path(live).resolve()) and not _inside(into, Path(live).resolve() / ".vacant"):
        raise ReconstructionError(f"refusing to reconstruct inside the live workspace {live}")
    into.mkdir(parents=True, exist_ok=True)
    if current is None:
        _clear(into)
        current = {}
    delta = diff(current, target)
    for rel in sorted(delta["removed"], key=lambda r: r.count("/"), reverse=True):
        _remove(into / rel)
    for rel in sorted(delta["changed"]):
        if current[rel][0] != target[rel][0]:
            _remove(into / rel)
    unrestorable: list[str] = []
    writes: Manifest = {**delta["added"], **delta["changed"]}
    for rel in sorted(writes, key=lambda r: (r.count("/"), r)):
        if not _write(into, rel, writes[rel], store):
            unrestorable.append(rel)
    return unrestorable


def _write(into: Path, rel: str, entry: Entry, store: ObjectStore) -> bool:
    kind, _size, mtime_ns, key, mode = entry
    path = into / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "d":
        path.mkdir(exist_ok=True)
        os.chmod(path, mode | 0o700)
        return True
    if kind == "s" or not store.has(key):
        return bool(kind == "s")  # special files are recorded, not recreated
    data = store.get(key)
    if kind == "l":
        if os.path.lexists(path):
            os.unlink(path)
        os.symlink(os.fsdecode(data), path)
        return True
    if path.is_symlink():
        path.unlink()
    with open(path, "wb") as handle:
        handle.write(data)
    os.chmod(path, mode)
    os.utime(path, ns=(mtime_ns, mtime_ns))
    return True


def remove_path(path: Path) -> None:
    """Remove a file, a link or a directory tree (a scratch directory's path; nothing if absent)."""
    _remove(path)


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        import shutil  # not on the hook's hot path

        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


def _clear(directory: Path) -> None:
    for child in directory.iterdir():
        _remove(child)


def _inside(path: Path, parent: Path) -> bool:
    return path == parent or parent in path.parents


def read_manifest_of(directory: Path) -> Manifest:
    """Scan an arbitrary directory with a throwaway index (for tests and verification)."""
    scratch_state = directory.parent / f".{directory.name}.vacant-probe"
    scratch_state.mkdir(exist_ok=True)
    try:
        scanner = Scanner(directory, Index(scratch_state / "index"), None, scratch_state, use_ignores=False)
        scanner.scan()
        return scanner.index.entries()
    finally:
        import shutil

        shutil.rmtree(scratch_state, ignore_errors=True)


def fold(baseline: Manifest, deltas: Iterable[dict[str, object]]) -> list[Manifest]:
    """Every state in order: the baseline, then one manifest after each delta."""
    states = [baseline]
    for delta in deltas:
        states.append(apply_delta(states[-1], delta))
    return states


def file_entry(content: bytes, store: ObjectStore, mode: int = 0o644) -> Entry:
    """A constructed state's entry for a file holding `content` (its bytes kept in `store`)."""
    return ["f", len(content), 0, store.put_bytes(content), mode]


def entries_of(directory: Path, rels: Iterable[str], store: ObjectStore) -> Manifest:
    """The entries of the paths `rels` as `directory` holds them (one that is not there is left
    out), their bytes kept in `store`: a scratch directory's paths as a constructed state's."""
    found: Manifest = {}
    for rel in rels:
        path = os.path.join(directory, rel)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        mode = st.st_mode & 0o7777
        if os.path.islink(path):
            link = os.fsencode(os.readlink(path))
            found[rel] = ["l", len(link), st.st_mtime_ns, store.put_bytes(link), mode]
        elif os.path.isdir(path):
            found[rel] = ["d", 0, 0, None, mode]
        elif os.path.isfile(path):
            with open(path, "rb") as handle:
                found[rel] = file_entry(handle.read(), store, mode)
        else:
            found[rel] = ["s", 0, st.st_mtime_ns, None, mode]
    return found
