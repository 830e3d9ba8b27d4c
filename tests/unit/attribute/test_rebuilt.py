"""The re-runs' scratch directory (vacant/attribute/rerun.py `Rebuilt`) is put back from what a
re-run changed on disk, not rebuilt whole: on generated states and generated doings of a command
(in-place writes of the same size in the same clock tick, renames over, removals, new files and
directories, a directory made where a file was, chmod, links), the directory holds exactly the
next state asked for, byte for byte, and nothing else."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vacant.attribute.replay import Scratch
from vacant.attribute.rerun import Rebuilt
from vacant.store.objects import ObjectStore
from vacant.store.states import Manifest, file_entry

PATHS = ["a.txt", "b.txt", "d/c.txt", "d/e/f.txt", "g/h.txt"]
contents = st.sampled_from([b"one\n", b"two\n", b"onf\n", b"", b"three lines\n" * 3])
states = st.dictionaries(st.sampled_from(PATHS), contents, max_size=len(PATHS))
doings = st.lists(st.tuples(st.sampled_from(["inplace", "rename", "remove", "new", "dir", "chmod", "link", "rmdir"]),
                            st.sampled_from([*PATHS, "new.txt", "d/new", "d"])), max_size=6)


def manifest(files: dict[str, bytes], store: ObjectStore) -> Manifest:
    state: Manifest = {}
    for rel, data in files.items():
        parts = rel.split("/")
        for depth in range(1, len(parts)):
            state["/".join(parts[:depth])] = ["d", 0, 0, None, 0o755]
        state[rel] = file_entry(data, store)
    return state


def do(directory: Path, doing: str, rel: str) -> None:
    """One thing a command might do to its workspace (ignoring what does not apply)."""
    path = directory / rel
    try:
        if doing == "inplace" and path.is_file():
            data = path.read_bytes()
            path.write_bytes(bytes(reversed(data)) if len(set(data)) > 1 else data.swapcase() or b"")
        elif doing == "rename" and path.is_file():
            (directory / ".tmp").write_bytes(b"renamed\n")
            os.replace(directory / ".tmp", path)
        elif doing == "remove" and path.is_file():
            path.unlink()
        elif doing == "new":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"new\n") if not path.is_dir() else None
        elif doing == "dir" and not path.exists():
            path.mkdir(parents=True)
        elif doing == "chmod" and path.exists():
            path.chmod(0o700)
        elif doing == "link" and not path.exists() and path.parent.is_dir():
            path.symlink_to("a.txt")
        elif doing == "rmdir" and path.is_dir():
            for child in sorted(path.rglob("*"), reverse=True):
                child.rmdir() if child.is_dir() and not child.is_symlink() else child.unlink()
            path.rmdir()
    except OSError:
        pass


def held(directory: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(directory)): (None if p.is_dir() else p.read_bytes())
            for p in directory.rglob("*")}


def expected(files: dict[str, bytes]) -> dict[str, bytes | None]:
    out: dict[str, bytes | None] = {}
    for rel, data in files.items():
        parts = rel.split("/")
        out.update(("/".join(parts[:depth]), None) for depth in range(1, len(parts)))
        out[rel] = data
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(runs=st.lists(st.tuples(states, doings), min_size=1, max_size=4))
def test_the_scratch_holds_exactly_each_state_asked_for(tmp_path_factory, runs):
    base = tmp_path_factory.mktemp("rebuilt")
    store = ObjectStore(base / "objects")
    (base / "scratch").mkdir()
    rebuilt = Rebuilt(base / "scratch", store, base / "live")
    for files, command in runs:
        directory = rebuilt.holding(manifest(files, store))
        assert held(directory) == expected(files)
        for doing, rel in command:  # at once: in the clock tick the state was written in, when the tick is coarse
            do(directory, doing, rel)
    directory = rebuilt.holding(manifest(runs[0][0], store))
    assert held(directory) == expected(runs[0][0])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(runs=st.lists(st.tuples(states, doings), min_size=1, max_size=4))
def test_the_checks_scratch_holds_exactly_each_state_asked_for(tmp_path_factory, runs):
    """The same of the directory the Stop's checks run in (vacant/attribute/replay.py `Scratch`):
    what a check run leaves there (bytecode, a cache, a file a test rewrote) is never part of the
    next state it is moved to."""
    base = tmp_path_factory.mktemp("scratch")
    store = ObjectStore(base / "objects")
    (base / "scratch").mkdir()
    scratch = Scratch(None, store, base / "scratch", base / "live")  # type: ignore[arg-type] - no recorded states asked for
    for files, command in runs:
        directory = scratch.holding(manifest(files, store))
        assert held(directory) == expected(files)
        for doing, rel in command:
            do(directory, doing, rel)
    directory = scratch.holding(manifest(runs[0][0], store))
    assert held(directory) == expected(runs[0][0])
