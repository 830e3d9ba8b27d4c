"""States: deltas folded from a baseline, and every recorded state rebuilt byte for byte."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from unittest import mock

import pytest

from vacant.core.locations import state_dir
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vacant.store import hasher
from vacant.store.objects import ObjectStore
from vacant.store.states import (
    ReconstructionError,
    apply_delta,
    diff,
    fold,
    load_manifest,
    materialize,
    open_scanner,
    read_manifest_of,
    save_manifest,
)

# -- reading a tree by hand (never through the hasher) ---------------------------------------


def snapshot(root: Path) -> dict[str, tuple]:
    """Every path under `root` (minus `.vacant/`): file bytes and mode, link target, dir mode."""
    tree: dict[str, tuple] = {}

    def walk(rel: str) -> None:
        with os.scandir(os.path.join(root, rel) if rel else root) as listing:
            for dirent in listing:
                path = f"{rel}/{dirent.name}" if rel else dirent.name
                if path == ".vacant":
                    continue
                st_ = os.lstat(dirent.path)
                if stat.S_ISLNK(st_.st_mode):
                    tree[path] = ("l", os.readlink(dirent.path))
                elif stat.S_ISDIR(st_.st_mode):
                    tree[path] = ("d", stat.S_IMODE(st_.st_mode))
                    walk(path)
                elif stat.S_ISREG(st_.st_mode):
                    with open(dirent.path, "rb") as handle:
                        tree[path] = ("f", handle.read(), stat.S_IMODE(st_.st_mode))
                else:
                    tree[path] = ("s",)

    walk("")
    return tree


def listing(root: Path) -> tuple[list[str], list[str], list[str]]:
    """(files, directories, symlinks) of the live tree, read with lstat, sorted."""
    tree = snapshot(root)
    files = sorted(rel for rel, item in tree.items() if item[0] == "f")
    dirs = sorted(rel for rel, item in tree.items() if item[0] == "d")
    links = sorted(rel for rel, item in tree.items() if item[0] == "l")
    return files, dirs, links


# -- the property test -----------------------------------------------------------------------

NAMES = ["a", "b", "c.txt", "sub"]
TARGETS = ["a", "sub/b", "../outside", "/nonexistent/abs", ".", "c.txt"]
pick = st.integers(min_value=0, max_value=63)
content = st.binary(min_size=1, max_size=24) | st.just(b"")

OPS = st.one_of(
    st.tuples(st.just("create"), pick, st.sampled_from(NAMES), content),
    st.tuples(st.just("overwrite"), pick, content),
    st.tuples(st.just("same_size"), pick),
    st.tuples(st.just("delete"), pick),
    st.tuples(st.just("rename"), pick, pick, st.sampled_from(NAMES)),
    st.tuples(st.just("mkdir"), pick, st.sampled_from(NAMES)),
    st.tuples(st.just("rmdir"), pick),
    st.tuples(st.just("symlink"), pick, st.sampled_from(NAMES), st.sampled_from(TARGETS)),
    st.tuples(st.just("chmod"), pick, st.sampled_from([0o644, 0o755, 0o600])),
    st.tuples(st.just("tick")),
)
# A program is a run of tool calls: each does a few file operations, then a hook scans (full, or
# scoped to the paths those operations touched).
STEPS = st.lists(
    st.tuples(st.lists(OPS, min_size=1, max_size=3), st.booleans()), min_size=1, max_size=12
).map(lambda steps: [op for ops, full in steps for op in ops + [("scan", full)]])


class Workspace:
    """A live tree on a coarse filesystem clock. A tick starts at a real filesystem time; until
    the next `tick` op every write is stamped with that time and the scanner's clock reads it, so
    writes and scans share one timestamp as they do within a real clock tick. (Ctimes, which the
    kernel sets, stay consistent: every change made in a tick has a ctime at or after its start.)"""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.probe = root.parent / "clock-probe"
        self.probe.touch()
        self.now = 0
        self.tick()
        self.touched: set[str] = set()

    def real_now(self) -> int:
        os.utime(self.probe)
        return self.probe.stat().st_mtime_ns

    def tick(self) -> None:
        start = self.real_now()  # at or after every change so far
        while (now := self.real_now()) <= start:
            time.sleep(0.0005)
        self.now = now

    def clock(self, _state) -> int:
        return self.now

    def stamp(self, rel: str) -> None:
        os.utime(self.root / rel, ns=(self.now, self.now))
        self.touched.add(rel)

    def write(self, rel: str, data: bytes) -> None:
        (self.root / rel).write_bytes(data)
        self.stamp(rel)

    def apply(self, op: tuple) -> None:
        files, dirs, links = listing(self.root)
        places = [""] + dirs
        kind = op[0]

        def join(parent: str, name: str) -> str:
            return f"{parent}/{name}" if parent else name

        if kind == "create":
            rel = join(places[op[1] % len(places)], op[2])
            if not os.path.lexists(self.root / rel):
                self.write(rel, op[3])
        elif kind == "overwrite" and files:
            self.write(files[op[1] % len(files)], op[2])
        elif kind == "same_size" and files:
            rel = files[op[1] % len(files)]
            old = (self.root / rel).read_bytes()
            if old:  # same size, other bytes, stamped with the current tick
                self.write(rel, bytes((byte + 1) % 256 for byte in old))
        elif kind == "delete" and files + links:
            rel = (files + links)[op[1] % len(files + links)]
            os.unlink(self.root / rel)
            self.touched.add(rel)
        elif kind == "rename" and files + links + dirs:
            movable = files + links + dirs
            source = movable[op[1] % len(movable)]
            into = [place for place in places if place != source and not place.startswith(source + "/")]
            target = join(into[op[2] % len(into)], op[3])
            if not os.path.lexists(self.root / target):
                os.rename(self.root / source, self.root / target)
                self.touched.update((source, target))
        elif kind == "mkdir":
            rel = join(places[op[1] % len(places)], op[2])
            if not os.path.lexists(self.root / rel):
                os.mkdir(self.root / rel)
                self.touched.add(rel)
        elif kind == "rmdir" and dirs:
            rel = dirs[op[1] % len(dirs)]
            shutil.rmtree(self.root / rel)
            self.touched.add(rel)
        elif kind == "symlink":
            rel = join(places[op[1] % len(places)], op[2])
            if not os.path.lexists(self.root / rel):
                os.symlink(op[3], self.root / rel)
                self.touched.add(rel)
        elif kind == "chmod" and files:
            rel = files[op[1] % len(files)]
            os.chmod(self.root / rel, op[2])
            self.touched.add(rel)
        elif kind == "tick":
            self.tick()

    def scan(self, full: bool):
        scope = None if full else sorted(self.touched)
        self.touched = set()
        return open_scanner(self.root).scan(scope)


def check_program(program: list[tuple]) -> None:
    with ExitStack() as stack:
        base = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="vacant-states-")))
        stack.enter_context(mock.patch.dict(os.environ))
        os.environ.pop("VACANT_STATE_DIR", None)
        os.environ.pop("VACANT_OBJECT_CAP", None)
        root = base / "ws"
        root.mkdir()
        (base / "outside").mkdir()
        work = Workspace(root)
        stack.enter_context(mock.patch.object(hasher, "filesystem_clock", work.clock))

        scanner = open_scanner(root)
        first = scanner.scan()
        baseline = scanner.index.entries()
        assert set(first.added) == set(baseline)
        snapshots, deltas, indexes = [snapshot(root)], [], [baseline]
        for op in program + [("scan", True)]:
            if op[0] == "scan":
                result = work.scan(full=op[1])
                assert result.errors == [] and result.unrestorable == []
                deltas.append(result.delta())
                snapshots.append(snapshot(root))
                indexes.append(open_scanner(root).index.entries())
            else:
                work.apply(op)

        store = ObjectStore(state_dir(root) / "objects")
        states = fold(baseline, deltas)
        assert len(states) == len(snapshots)
        for number, (state, index) in enumerate(zip(states, indexes)):
            # The folded deltas agree with what the index held after that scan.
            assert diff(state, index) == {"added": {}, "changed": {}, "removed": []}, number

        for number, (state, expected) in enumerate(zip(states, snapshots)):
            scratch = base / f"scratch-{number}"
            assert materialize(state, scratch, store, live=root) == []
            assert snapshot(scratch) == expected, f"state {number} from scratch"

        moving = base / "moving"
        order = list(range(len(states))) + list(reversed(range(len(states) - 1)))
        current = None
        for number in order:
            assert materialize(states[number], moving, store, current=current, live=root) == []
            assert snapshot(moving) == snapshots[number], f"moving into state {number}"
            current = states[number]


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(STEPS)
def test_every_recorded_state_materializes_exactly(program):
    check_program(program)


# Hand-picked programs for cases a random search finds only by luck.
@pytest.mark.parametrize(
    "program",
    [
        # The racy-git case: a same-size rewrite in the tick of the scan that recorded the file.
        [("create", 0, "a", b"one"), ("scan", True), ("same_size", 0), ("scan", True)],
        [("create", 0, "a", b"one"), ("scan", False), ("same_size", 0), ("scan", False)],
        # Two files of one size and one mtime, then one renamed over the other.
        [("create", 0, "a", b"AA"), ("create", 0, "b", b"BB"), ("scan", True), ("tick",), ("scan", True),
         ("delete", 0), ("rename", 0, 0, "a"), ("scan", True)],
        # A directory replaced by a file of the same name, and back.
        [("mkdir", 0, "sub"), ("create", 1, "a", b"x"), ("scan", True), ("rmdir", 0),
         ("create", 0, "sub", b"now a file"), ("scan", False), ("delete", 0), ("mkdir", 0, "sub"),
         ("scan", False)],
        # A symlink to a directory, then a real directory in its place.
        [("mkdir", 0, "a"), ("create", 1, "b", b"in a"), ("symlink", 0, "sub", "a"), ("scan", True),
         ("delete", 0), ("mkdir", 0, "sub"), ("scan", True)],
        # A directory renamed into another one.
        [("mkdir", 0, "a"), ("mkdir", 0, "sub"), ("create", 1, "c.txt", b"c"), ("scan", True),
         ("rename", 0, 2, "b"), ("scan", False)],
    ],
)
def test_hand_picked_programs(program):
    check_program(program)


# -- the live workspace is never a target ----------------------------------------------------


@pytest.fixture
def recorded(tmp_path, monkeypatch):
    monkeypatch.delenv("VACANT_STATE_DIR", raising=False)
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "main.py").write_bytes(b"print('live')\n")
    (root / "README").write_bytes(b"live readme\n")
    scanner = open_scanner(root)
    scanner.scan()
    return root, scanner.index.entries(), ObjectStore(state_dir(root) / "objects")


@pytest.mark.parametrize("inside", [".", "src", "src/scratch", "new/deeper/scratch"])
def test_materialize_inside_the_live_workspace_refuses_and_writes_nothing(recorded, inside):
    root, manifest, store = recorded
    before = snapshot(root)
    target = {**manifest, "README": ["f", 5, 0, store.put_bytes(b"other"), 0o644]}
    with pytest.raises(ReconstructionError):
        materialize(target, root / inside, store, live=root)
    with pytest.raises(ReconstructionError):
        materialize(target, root / inside, store, current=manifest, live=root)
    assert snapshot(root) == before
    assert not (root / "new").exists()


def test_materialize_through_a_symlink_into_the_workspace_refuses(recorded, tmp_path):
    root, manifest, store = recorded
    (tmp_path / "sneaky").symlink_to(root / "src")
    before = snapshot(root)
    with pytest.raises(ReconstructionError):
        materialize(manifest, tmp_path / "sneaky", store, live=root)
    with pytest.raises(ReconstructionError):
        materialize(manifest, tmp_path / "sneaky" / "deeper", store, live=root)
    assert snapshot(root) == before


def test_materialize_next_to_the_workspace_is_allowed(recorded, tmp_path):
    root, manifest, store = recorded
    scratch = tmp_path / "ws-scratch"  # shares a name prefix with the workspace, is not inside it
    assert materialize(manifest, scratch, store, live=root) == []
    assert snapshot(scratch) == snapshot(root)


def test_materialize_from_scratch_clears_what_was_there(recorded, tmp_path):
    root, manifest, store = recorded
    scratch = tmp_path / "scratch"
    (scratch / "stale" / "dir").mkdir(parents=True)
    (scratch / "stale.txt").write_text("old")
    os.symlink("/", scratch / "stale-link")
    materialize(manifest, scratch, store, live=root)
    assert snapshot(scratch) == snapshot(root)


def test_missing_blob_is_reported_unrestorable(recorded, tmp_path):
    root, manifest, store = recorded
    target = {**manifest, "ghost.bin": ["f", 3, 0, "0" * 32, 0o644]}
    assert materialize(target, tmp_path / "scratch", store, live=root) == ["ghost.bin"]
    assert not (tmp_path / "scratch" / "ghost.bin").exists()


# -- manifests and deltas --------------------------------------------------------------------


def test_manifest_round_trips_through_the_store(recorded):
    root, manifest, store = recorded
    key = save_manifest(store, manifest)
    assert load_manifest(store, key) == manifest
    assert save_manifest(store, dict(reversed(list(manifest.items())))) == key  # key is order-free


def test_apply_delta_and_diff_are_inverse():
    old = {"a": ["f", 1, 10, "h1", 0o644], "d": ["d", 0, 0, None, 0o755], "gone": ["f", 2, 10, "h2", 0o644]}
    new = {"a": ["f", 1, 99, "h9", 0o644], "d": ["d", 0, 0, None, 0o700], "new": ["l", 3, 5, "h3", 0o777]}
    delta = diff(old, new)
    assert delta == {"added": {"new": new["new"]}, "changed": {"a": new["a"], "d": new["d"]}, "removed": ["gone"]}
    assert apply_delta(old, delta) == new
    assert old["a"][3] == "h1"  # apply_delta does not modify its input
    assert fold(old, [delta, diff(new, old)]) == [old, new, old]
    # An mtime-only difference is not a change of state.
    touched = {**old, "a": ["f", 1, 12345, "h1", 0o644]}
    assert diff(old, touched) == {"added": {}, "changed": {}, "removed": []}


def test_read_manifest_of_matches_the_recorded_manifest(recorded, tmp_path):
    root, manifest, store = recorded
    scratch = tmp_path / "scratch"
    materialize(manifest, scratch, store, live=root)
    assert diff(read_manifest_of(scratch), manifest) == {"added": {}, "changed": {}, "removed": []}
    assert not list(tmp_path.glob("*.vacant-probe"))
