"""The incremental hasher: git's index rule and racy-git rule, ignores, odd files, the index file."""

from __future__ import annotations

import json
import os
import socket
import stat
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vacant.core.locations import state_dir
import xxhash

from vacant.store import hasher
from vacant.store.hasher import Index, Scanner
from vacant.store.objects import ObjectStore
from vacant.store.states import materialize, open_scanner

PAST_NS = time.time_ns() - 10_000_000_000  # ten seconds ago: never racy


@pytest.fixture
def ws(tmp_path, monkeypatch):
    monkeypatch.delenv("VACANT_STATE_DIR", raising=False)
    monkeypatch.delenv("VACANT_OBJECT_CAP", raising=False)
    root = tmp_path / "ws"
    root.mkdir()
    return root


def scan(root: Path, paths=None):
    """A scan by a fresh scanner, as a new hook process would run it (index read from disk)."""
    return open_scanner(root).scan(paths)


def entries(root: Path) -> dict:
    return Index(state_dir(root) / "index").entries()


def write(path: Path, data: bytes, mtime_ns: int | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    if mtime_ns is not None:
        os.utime(path, ns=(mtime_ns, mtime_ns))
    return path


def h(data: bytes) -> str:
    return xxhash.xxh3_128_hexdigest(data)


def settle(root: Path) -> None:
    """Wait until the filesystem clock is past every change made so far under `root`.

    Like git, the hasher re-reads a file changed (mtime or ctime) in the tick a scan started in;
    a test about reuse first lets that tick end.
    """
    newest = max(os.lstat(os.path.join(d, n)).st_ctime_ns for d, ds, fs in os.walk(root) for n in ds + fs)
    probe = root.parent / "settle-probe"
    for _ in range(1000):
        probe.touch()
        os.utime(probe)
        if probe.stat().st_mtime_ns > newest:
            return
        time.sleep(0.002)
    raise AssertionError("the filesystem clock did not move")


@pytest.fixture
def hash_calls(monkeypatch):
    """Every path the scanner really reads."""
    calls: list[str] = []
    real = hasher.hash_file

    def spy(path, size):
        calls.append(os.fsdecode(path))
        return real(path, size)

    monkeypatch.setattr(hasher, "hash_file", spy)
    return calls


# -- the index rule and the racy-git rule ---------------------------------------------------


def test_first_scan_records_files_dirs_and_hashes(ws):
    write(ws / "a.txt", b"alpha")
    write(ws / "d" / "e" / "b.txt", b"beta")
    os.chmod(ws / "a.txt", 0o755)
    result = scan(ws)
    assert set(result.added) == {"a.txt", "d", "d/e", "d/e/b.txt"}
    assert result.changed == {} and result.removed == []
    assert (result.files, result.hashed, result.reused) == (2, 2, 0)
    st = (ws / "a.txt").stat()
    assert result.added["a.txt"] == ["f", 5, st.st_mtime_ns, h(b"alpha"), 0o755]
    assert result.added["d/e/b.txt"][3] == h(b"beta")
    assert result.added["d"][0] == "d"
    assert entries(ws) == result.added  # saved, and read back by a fresh index


def test_unchanged_old_file_is_reused_not_rehashed(ws, hash_calls):
    write(ws / "old.txt", b"settled content", PAST_NS)
    settle(ws)
    first = scan(ws)
    assert (first.hashed, first.reused) == (1, 0)
    assert len(hash_calls) == 1
    second = scan(ws)
    assert (second.files, second.hashed, second.reused) == (1, 0, 1)
    assert second.empty
    assert len(hash_calls) == 1  # the file was not read again
    assert entries(ws)["old.txt"][3] == h(b"settled content")


def test_racy_git_same_size_rewrite_in_the_same_tick_is_detected(ws, monkeypatch):
    target = write(ws / "f.txt", b"version 1")
    real_clock = hasher.filesystem_clock

    def scan_starts_in_the_write_tick(state):
        now = real_clock(state)
        os.utime(target, ns=(now, now))  # the file was written in the tick the scan started in
        return now

    monkeypatch.setattr(hasher, "filesystem_clock", scan_starts_in_the_write_tick)
    first = scan(ws)
    monkeypatch.undo()
    tick = target.stat().st_mtime_ns
    assert first.added["f.txt"][1:4] == [9, tick, h(b"version 1")]

    write(target, b"version 2", tick)  # same size, same timestamp: stat cannot tell them apart
    assert (target.stat().st_size, target.stat().st_mtime_ns) == (9, tick)
    second = scan(ws)
    assert second.hashed == 1 and second.reused == 0
    assert list(second.changed) == ["f.txt"]
    assert second.changed["f.txt"][3] == h(b"version 2")

    time.sleep(0.05)  # the filesystem clock moves past the tick: the next scan records it as settled
    scan(ws)
    third = scan(ws)
    assert (third.hashed, third.reused) == (0, 1) and third.empty


def test_same_size_file_renamed_over_another_is_detected(ws):
    """Same size, same mtime, same mode: only the ctime tells that `b` was moved onto `a`."""
    write(ws / "a", b"AAAA", PAST_NS)
    write(ws / "b", b"BBBB", PAST_NS)
    settle(ws)
    scan(ws)
    assert scan(ws).reused == 2  # both settled: the next scan would trust the stat data
    os.rename(ws / "b", ws / "a")
    result = scan(ws)
    assert result.changed == {"a": ["f", 4, PAST_NS, h(b"BBBB"), 0o644]}
    assert result.removed == ["b"]


def test_rewrite_with_a_restored_mtime_is_detected(ws):
    """`cp -p`, `tar`, `rsync -t` put an old mtime back; the ctime still moves."""
    target = write(ws / "f", b"original", PAST_NS)
    settle(ws)
    scan(ws)
    write(target, b"replaced", PAST_NS)
    assert target.stat().st_mtime_ns == PAST_NS
    assert scan(ws).changed["f"][3] == h(b"replaced")


def test_changes_of_size_mtime_content_and_mode_are_seen(ws):
    write(ws / "size", b"aaaa", PAST_NS)
    write(ws / "mtime", b"bbbb", PAST_NS)
    write(ws / "mode", b"cccc", PAST_NS)
    write(ws / "same", b"dddd", PAST_NS)
    settle(ws)
    scan(ws)
    write(ws / "size", b"aaaaa", PAST_NS)
    write(ws / "mtime", b"BBBB", PAST_NS + 1_000_000_000)
    os.chmod(ws / "mode", 0o600)
    result = scan(ws)
    assert sorted(result.changed) == ["mode", "mtime", "size"]
    assert result.changed["mode"][4] == 0o600
    assert result.changed["mtime"][3] == h(b"BBBB")
    assert result.reused == 1  # "same"


def test_touch_without_change_is_not_a_change(ws):
    write(ws / "f", b"same bytes", PAST_NS)
    scan(ws)
    os.utime(ws / "f", ns=(PAST_NS + 5, PAST_NS + 5))
    result = scan(ws)
    assert result.hashed == 1 and result.empty


def test_removed_and_replaced_paths(ws):
    write(ws / "gone", b"x")
    write(ws / "d" / "inner", b"y")
    write(ws / "kind", b"file first")
    scan(ws)
    (ws / "gone").unlink()
    (ws / "d" / "inner").unlink()
    (ws / "d").rmdir()
    (ws / "kind").unlink()
    (ws / "kind").mkdir()
    result = scan(ws)
    assert result.removed == ["d", "d/inner", "gone"]
    assert result.changed["kind"][0] == "d"


# -- what is not followed, not read, not crashed on -----------------------------------------


def test_symlink_out_of_the_workspace_is_recorded_not_followed(ws, tmp_path, hash_calls):
    outside = tmp_path / "outside"
    write(outside / "secret.txt", b"do not read me")
    write(outside / "sub" / "deep.txt", b"nor me")
    os.symlink(outside, ws / "out")
    os.symlink("../outside/secret.txt", ws / "rel")
    os.symlink("nowhere/at/all", ws / "dangling")
    write(ws / "real.txt", b"mine")
    store = ObjectStore(state_dir(ws) / "objects")

    result = scan(ws)
    assert set(result.added) == {"out", "rel", "dangling", "real.txt"}
    for name, target in (("out", str(outside)), ("rel", "../outside/secret.txt"), ("dangling", "nowhere/at/all")):
        kind, size, _mtime, key, _mode = result.added[name]
        assert (kind, size, key) == ("l", len(target.encode()), h(target.encode()))
        assert store.get(key) == target.encode()  # the target text is kept, so it can be restored
    assert hash_calls == [str(ws / "real.txt")]
    assert result.files == 1

    # A scoped scan through the link does not follow it either.
    scoped = scan(ws, ["out/secret.txt", "out/sub", "out"])
    assert scoped.empty and hash_calls == [str(ws / "real.txt")]
    assert not any(rel.startswith("out/") for rel in entries(ws))


def test_retargeted_symlink_is_a_change(ws, tmp_path):
    os.symlink("one", ws / "link")
    scan(ws)
    os.unlink(ws / "link")
    os.symlink("two", ws / "link")
    result = scan(ws)
    assert result.changed["link"][3] == h(b"two")


def run_with_timeout(function, seconds: float = 10.0):
    outcome: dict = {}

    def target():
        try:
            outcome["value"] = function()
        except BaseException as error:  # noqa: BLE001 - reported to the test below
            outcome["error"] = error

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    return thread.is_alive(), outcome


def unblock_fifo(path: Path) -> None:
    try:  # a scanner blocked in open(fifo) for reading wakes up when a writer appears
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


def test_fifo_and_socket_are_recorded_without_blocking(ws):
    os.mkfifo(ws / "pipe")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(ws / "sock"))
    write(ws / "d" / "normal.txt", b"n")
    os.mkfifo(ws / "d" / "pipe2")
    try:
        for paths in (None, ["pipe", "sock", "d/pipe2"]):
            stuck, outcome = run_with_timeout(lambda: scan(ws, paths))
            if stuck:
                unblock_fifo(ws / "pipe")
                unblock_fifo(ws / "d" / "pipe2")
            assert not stuck, "the scan blocked on a special file"
            assert "error" not in outcome, outcome.get("error")
        found = entries(ws)
        for name in ("pipe", "sock", "d/pipe2"):
            assert found[name][0] == "s" and found[name][3] is None, name
        assert found["d/normal.txt"][0] == "f"
    finally:
        server.close()


def test_device_node_is_recorded_as_special(ws):
    os.mknod(ws / "null", stat.S_IFCHR | 0o600, os.makedev(1, 3))  # the suite runs as root
    assert scan(ws).added["null"][0] == "s"


def test_file_deleted_between_listing_and_reading_is_an_error_not_a_crash(ws, monkeypatch):
    write(ws / "keep.txt", b"k")
    write(ws / "vanishes.txt", b"v")
    write(ws / "was-there.txt", b"w")
    scan(ws)
    write(ws / "vanishes.txt", b"v2")
    write(ws / "new-and-gone.txt", b"g")
    os.utime(ws / "was-there.txt", ns=(PAST_NS, PAST_NS))  # force a re-read
    real = hasher.hash_file
    doomed = {"vanishes.txt", "new-and-gone.txt", "was-there.txt"}

    def delete_then_hash(path, size):
        if os.path.basename(os.fsdecode(path)) in doomed:
            os.unlink(path)
        return real(path, size)

    monkeypatch.setattr(hasher, "hash_file", delete_then_hash)
    result = scan(ws)
    assert sorted(error.split(":")[0] for error in result.errors) == sorted(doomed)
    assert result.removed == ["vanishes.txt", "was-there.txt"]  # they are gone
    assert "new-and-gone.txt" not in result.added
    assert set(entries(ws)) == {"keep.txt"}


def test_file_deleted_between_listing_and_stat_is_an_error_not_a_crash(ws, monkeypatch):
    write(ws / "keep.txt", b"k")
    write(ws / "d" / "vanishes.txt", b"v")
    scan(ws)
    real_scandir = os.scandir

    def listing_then_delete(path):
        listed = list(real_scandir(path))
        victim = Path(path) / "vanishes.txt"
        if victim.exists():
            victim.unlink()
        return listed

    monkeypatch.setattr(os, "scandir", listing_then_delete)
    result = scan(ws)
    monkeypatch.undo()
    assert [error.split(":")[0] for error in result.errors] == ["d/vanishes.txt"]
    assert result.removed == ["d/vanishes.txt"]
    assert set(entries(ws)) == {"keep.txt", "d"}


def test_non_utf8_names_are_recorded_saved_and_restored(ws, tmp_path):
    raw_root = os.fsencode(ws)
    names = {b"caf\xe9.txt": b"latin-1 name", b"dir-\xff/inner-\xfe.bin": b"\x00\x01 binary"}
    os.mkdir(raw_root + b"/dir-\xff")
    for name, data in names.items():
        fd = os.open(raw_root + b"/" + name, os.O_WRONLY | os.O_CREAT, 0o644)
        os.write(fd, data)
        os.close(fd)
    os.symlink(b"target-\xfd", raw_root + b"/link-\xfc")

    result = scan(ws)
    rels = {os.fsdecode(name) for name in names} | {os.fsdecode(b"dir-\xff"), os.fsdecode(b"link-\xfc")}
    assert set(result.added) == rels
    assert result.errors == []
    assert result.added[os.fsdecode(b"caf\xe9.txt")][3] == h(b"latin-1 name")

    saved = entries(ws)  # a fresh index parses the saved file
    assert set(saved) == rels
    again = scan(ws)
    assert again.empty and again.errors == []
    scoped = scan(ws, [os.fsdecode(b"caf\xe9.txt")])  # the overlay path
    assert scoped.empty and scoped.errors == []
    assert set(entries(ws)) == rels

    scratch = tmp_path / "scratch"
    store = ObjectStore(state_dir(ws) / "objects")
    assert materialize(saved, scratch, store, live=ws) == []
    raw_scratch = os.fsencode(scratch)
    for name, data in names.items():
        with open(raw_scratch + b"/" + name, "rb") as handle:
            assert handle.read() == data
    assert os.readlink(raw_scratch + b"/link-\xfc") == b"target-\xfd"


# -- ignores --------------------------------------------------------------------------------


def test_gitignore_vacantignore_git_and_vacant_dirs(ws):
    write(ws / ".gitignore", b"*.log\n!keep.log\nbuild/\n/rooted.txt\n")
    write(ws / ".vacantignore", b"data/\n")
    write(ws / "sub" / ".gitignore", b"secret.txt\n")
    for rel in ("a.log", "keep.log", "build/out.o", "rooted.txt", "sub/rooted.txt", "data/big.csv",
                "sub/secret.txt", "sub/deeper/secret.txt", "secret.txt", "sub/ok.txt", "ok.txt",
                ".git/config", "sub/.git/HEAD", ".vacant/junk", "sub/data/x"):
        write(ws / rel, b"x")
    result = scan(ws)
    assert set(result.added) == {
        ".gitignore", ".vacantignore", "keep.log", "secret.txt", "ok.txt",
        "sub", "sub/.gitignore", "sub/rooted.txt", "sub/ok.txt", "sub/deeper",
    }


def test_ignores_do_not_apply_outside_their_directory(ws):
    write(ws / "a" / ".gitignore", b"*.tmp\n")
    write(ws / "a" / "x.tmp", b"x")
    write(ws / "b" / "x.tmp", b"x")
    assert set(scan(ws).added) == {"a", "a/.gitignore", "b", "b/x.tmp"}


def test_unignoring_a_file_adds_it_on_the_next_full_scan(ws):
    write(ws / ".gitignore", b"*.log\n")
    write(ws / "app.log", b"log line")
    write(ws / "code.py", b"print()")
    assert "app.log" not in scan(ws).added
    write(ws / ".gitignore", b"*.tmp\n*.bak\n")
    result = scan(ws)
    assert set(result.added) == {"app.log"}
    assert set(result.changed) == {".gitignore"}
    # And ignoring a recorded file takes it out.
    write(ws / ".gitignore", b"*.py\n")
    assert scan(ws).removed == ["code.py"]


def test_ignore_file_rewritten_in_the_same_tick_is_noticed(ws, monkeypatch):
    """The racy-git rule applies to ignore files too: same size, same mtime, new patterns."""
    ignore = write(ws / ".gitignore", b"*.log\n")
    write(ws / "app.log", b"log line")
    write(ws / "app.txt", b"text")
    real_clock = hasher.filesystem_clock

    def scan_starts_in_the_write_tick(state):
        now = real_clock(state)
        os.utime(ignore, ns=(now, now))
        return now

    monkeypatch.setattr(hasher, "filesystem_clock", scan_starts_in_the_write_tick)
    assert "app.log" not in scan(ws).added
    monkeypatch.undo()
    tick = ignore.stat().st_mtime_ns
    write(ignore, b"*.txt\n", tick)
    result = scan(ws)
    assert set(result.added) == {"app.log"}
    assert result.removed == ["app.txt"]


def test_new_nested_gitignore_and_deleted_vacantignore(ws):
    write(ws / ".vacantignore", b"*.csv\n")
    write(ws / "d" / "x.csv", b"1,2")
    write(ws / "d" / "y.txt", b"y")
    assert set(scan(ws).added) == {".vacantignore", "d", "d/y.txt"}
    write(ws / "d" / ".gitignore", b"y.txt\n")
    (ws / ".vacantignore").unlink()
    result = scan(ws)
    assert set(result.added) == {"d/.gitignore", "d/x.csv"}
    assert result.removed == [".vacantignore", "d/y.txt"]


# -- scoped scans ---------------------------------------------------------------------------


def test_scoped_scan_reports_only_its_paths_and_leaves_others(ws, hash_calls):
    for rel in ("a.txt", "b.txt", "d/x.txt", "d/y.txt", "e/z.txt"):
        write(ws / rel, b"v1", PAST_NS)
    scan(ws)
    before = entries(ws)
    hash_calls.clear()
    for rel in ("a.txt", "b.txt", "d/x.txt", "e/z.txt"):
        write(ws / rel, b"v2", PAST_NS + 1_000_000_000)

    result = scan(ws, ["a.txt"])
    assert list(result.changed) == ["a.txt"] and not result.added and not result.removed
    assert hash_calls == [str(ws / "a.txt")]
    after = entries(ws)
    assert after["a.txt"][3] == h(b"v2")
    assert {rel: entry for rel, entry in after.items() if rel != "a.txt"} == {
        rel: entry for rel, entry in before.items() if rel != "a.txt"
    }

    result = scan(ws, ["d"])  # a directory: its subtree
    assert list(result.changed) == ["d/x.txt"]

    result = scan(ws, ["new/deeper/file.txt", "a.txt"])
    assert result.empty  # not created yet; a.txt already seen
    write(ws / "new" / "deeper" / "file.txt", b"n")
    result = scan(ws, ["./new/deeper/file.txt", "../elsewhere", "/etc/passwd", ".git/config"])
    assert set(result.added) == {"new", "new/deeper", "new/deeper/file.txt"}

    full = scan(ws)  # the full scan sees what the scoped ones were not asked about
    assert sorted(full.changed) == ["b.txt", "e/z.txt"]
    assert full.added == {} and full.removed == []


def test_scoped_scan_of_deleted_paths(ws):
    write(ws / "f.txt", b"f")
    write(ws / "d" / "a" / "b.txt", b"b")
    write(ws / "keep" / "k.txt", b"k")
    scan(ws)
    (ws / "f.txt").unlink()
    (ws / "d" / "a" / "b.txt").unlink()
    (ws / "d" / "a").rmdir()
    (ws / "d").rmdir()
    (ws / "keep" / "k.txt").unlink()
    result = scan(ws, ["f.txt", "d"])
    assert result.removed == ["d", "d/a", "d/a/b.txt", "f.txt"]
    assert "keep/k.txt" in entries(ws)  # not in scope: untouched
    assert scan(ws).removed == ["keep/k.txt"]


def test_scoped_scan_honours_ignores_for_new_paths(ws):
    write(ws / ".gitignore", b"*.log\n")
    scan(ws)
    write(ws / "x.log", b"x")
    write(ws / "x.txt", b"x")
    result = scan(ws, ["x.log", "x.txt"])
    assert set(result.added) == {"x.txt"}


def test_lookup_of_a_name_that_ends_another_quoted_name(ws):
    """`a` must not be found inside the index key `weird"a` (JSON: "weird\\"a")."""
    write(ws / 'weird"a', b"AAAA", PAST_NS)
    scan(ws)
    write(ws / "a", b"BBBB", PAST_NS)  # same size, same mtime as the other file
    result = scan(ws, ["a"])
    assert set(result.added) == {"a"}
    assert result.added["a"][3] == h(b"BBBB")
    assert scan(ws).empty


# -- the index file -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "garbage",
    [
        b"\x00\xff\xfe garbage \x13\x37 no newline at all",
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
        b'{"version": 2, "clock_ns": 5, "ignore_stamp": {}}\n{"a.txt": ["f", 1, 2',
        b'{"version": 999, "clock_ns": 5}\n{}',
        b"",
    ],
)
def test_corrupt_index_is_rebuilt_with_a_warning(ws, capsys, garbage):
    write(ws / "a.txt", b"a")
    write(ws / "b" / "c.txt", b"c")
    scan(ws)
    capsys.readouterr()
    index_path = state_dir(ws) / "index"
    index_path.write_bytes(garbage)

    result = scan(ws, ["a.txt"])  # a scoped scan (a Write hook) must not crash on it either
    assert result.errors == []
    result = scan(ws)
    err = capsys.readouterr().err
    if garbage:
        assert "rebuilding" in err and str(index_path) in err
    assert set(result.added) >= {"b", "b/c.txt"}  # everything counts as new against nothing
    assert result.removed == []
    assert set(entries(ws)) == {"a.txt", "b", "b/c.txt"}
    assert scan(ws).empty
    assert capsys.readouterr().err == ""  # rebuilt: no warning any more


def test_corrupt_overlay_is_rebuilt_with_a_warning(ws, capsys):
    write(ws / "a.txt", b"a")
    scan(ws)
    write(ws / "a.txt", b"a2")
    scan(ws, ["a.txt"])
    (state_dir(ws) / "index.overlay").write_bytes(b"[1, 2,")
    result = scan(ws)
    assert "rebuilding" in capsys.readouterr().err
    assert result.errors == []
    assert entries(ws)["a.txt"][3] == h(b"a2")


def state_files(root: Path) -> list[str]:
    return sorted(path.name for path in state_dir(root).iterdir())


def test_index_is_replaced_atomically(ws, monkeypatch):
    write(ws / "a.txt", b"a")
    scan(ws)
    index_path = state_dir(ws) / "index"
    inode = index_path.stat().st_ino
    write(ws / "b.txt", b"b")
    scan(ws)
    assert index_path.stat().st_ino != inode  # a new file renamed over the old, not rewritten in place
    scan(ws, ["a.txt"])
    assert not [name for name in state_files(ws) if "tmp" in name]

    # A save that dies before its rename leaves the previous index whole.
    saved = index_path.read_bytes()
    write(ws / "c.txt", b"c")

    def no_rename(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(hasher.os, "replace", no_rename)
    with pytest.raises(OSError):
        scan(ws)
    monkeypatch.undo()
    assert index_path.read_bytes() == saved
    assert set(scan(ws).added) == {"c.txt"}


# -- the object-store cap -------------------------------------------------------------------


def test_files_above_the_cap_are_hashed_but_unrestorable(ws, tmp_path, monkeypatch):
    monkeypatch.setenv("VACANT_OBJECT_CAP", "100")
    write(ws / "small.txt", b"s" * 100)
    write(ws / "big.bin", b"B" * 101)
    result = scan(ws)
    assert result.unrestorable == ["big.bin"]
    assert result.added["big.bin"][3] == h(b"B" * 101)  # hashed all the same
    store = ObjectStore(state_dir(ws) / "objects")
    assert store.has(h(b"s" * 100)) and not store.has(h(b"B" * 101))
    assert materialize(result.added, tmp_path / "scratch", store, live=ws) == ["big.bin"]
    assert (tmp_path / "scratch" / "small.txt").read_bytes() == b"s" * 100


def test_large_file_under_the_cap_is_stored(ws):
    data = os.urandom(5 * 1024 * 1024)  # past the in-memory threshold of hash_file
    write(ws / "large.bin", data)
    result = scan(ws)
    assert result.unrestorable == []
    assert ObjectStore(state_dir(ws) / "objects").get(h(data)) == data


def test_scanner_without_a_store_still_hashes(ws, tmp_path):
    write(ws / "f", b"data")
    state = tmp_path / "state"
    state.mkdir()
    result = Scanner(ws, Index(state / "index"), None, state).scan()
    assert result.added["f"][3] == h(b"data") and result.unrestorable == []


UPDATES = st.lists(st.dictionaries(st.sampled_from(["a", "b", "c/d", "é"]),
                                   st.one_of(st.none(), st.tuples(st.just("f"), st.integers(0, 9)).map(list)),
                                   min_size=1, max_size=3), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(updates=UPDATES, compact=st.sampled_from([1 << 20, 120]), cut=st.integers(1, 40))
def test_the_overlay_journal_reads_back_what_was_written(tmp_path_factory, monkeypatch, updates, compact, cut):
    """Oracle: a plain dict merged update by update. A crash that cuts the last append short loses
    that update alone; compaction (a small limit here) changes nothing that is read back."""
    monkeypatch.setattr(hasher, "OVERLAY_COMPACT", compact)
    path = tmp_path_factory.mktemp("idx") / "index"
    expected: dict = {}
    for number, part in enumerate(updates):
        Index(path).update(part, number)
        expected.update({rel: [entry, number] for rel, entry in part.items()})
    assert Index(path).overlay == expected
    overlay = path.with_name("index.overlay")
    raw = overlay.read_bytes()
    last = raw.rstrip(b"\n").rfind(b"\n") + 1
    if last and len(raw) - 1 - last > 1:  # the journal has an earlier line: cut into the last one
        overlay.write_bytes(raw[: min(len(raw) - 2, last + cut)])
        before = Index(path).overlay
        assert before == _merged(updates, upto=len(updates) - 1)
        Index(path).update({"z": None}, 99)  # the next append starts on a line of its own
        assert Index(path).overlay == {**before, "z": [None, 99]}


def _merged(updates: list, upto: int) -> dict:
    merged: dict = {}
    for number, part in enumerate(updates[:upto]):
        merged.update({rel: [entry, number] for rel, entry in part.items()})
    return merged


def _overlay_line_by_line(raw: bytes) -> tuple[dict, bool]:
    """The oracle: each line read alone, later over earlier; a bad line discards the journal,
    unless it is the last piece (an append cut short). (merged, whether anything was discarded)"""
    pieces = raw.split(b"\n")
    merged: dict = {}
    discarded = False
    for number in [n for n, piece in enumerate(pieces) if piece.strip()]:
        try:
            part = json.loads(pieces[number])
        except ValueError:
            part = None
        if isinstance(part, dict):
            merged.update(part)
        elif number == len(pieces) - 1:
            discarded = True
        else:
            return {}, True
    return merged, discarded


LINE = st.one_of(
    st.dictionaries(st.sampled_from(["a", "b", "c/d"]), st.lists(st.integers(0, 9), max_size=2), max_size=2)
    .map(lambda d: json.dumps(d).encode()),
    st.sampled_from([b"", b" ", b"[1, 2]", b"{\"a\": [1]", b"{\"a\":\"x", b"y\"}", b"{\"b\":1},{\"c\":2}", b"{}",
                     b"\"text\"", b"{\"a\": [1]} ", b"  {\"b\": []}"]),
)


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(LINE, max_size=8), newline=st.booleans())
def test_the_overlay_reads_every_journal_as_line_by_line(tmp_path_factory, lines, newline):
    path = tmp_path_factory.mktemp("idx") / "index"
    raw = b"\n".join(lines) + (b"\n" if newline and lines else b"")
    path.with_name("index.overlay").write_bytes(raw)
    expected, discarded = _overlay_line_by_line(raw)
    index = Index(path)
    assert index.overlay == expected
    assert (index.rebuilt is not None) == discarded
