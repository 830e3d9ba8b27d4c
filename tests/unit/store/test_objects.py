"""The content-addressed object store: dedup, temp + rename, the size cap."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import xxhash

from vacant.store import objects
from vacant.store.objects import DEFAULT_SIZE_CAP, ObjectStore, hash_file


def blob_files(directory: Path) -> list[Path]:
    return sorted(path for path in directory.rglob("*") if path.is_file())


def test_same_bytes_twice_make_one_blob(tmp_path):
    store = ObjectStore(tmp_path / "objects")
    first = store.put_bytes(b"hello, world\n")
    # A second store on the same directory does not share the in-memory cache of the first.
    second = ObjectStore(tmp_path / "objects").put_bytes(b"hello, world\n")
    third = store.put_bytes(b"hello, world\n")
    assert first == second == third
    assert first == xxhash.xxh3_128_hexdigest(b"hello, world\n")
    assert blob_files(tmp_path / "objects") == [store.path(first)]
    assert store.get(first) == b"hello, world\n"


def test_different_bytes_make_different_blobs(tmp_path):
    store = ObjectStore(tmp_path / "objects")
    keys = {store.put_bytes(data) for data in (b"a", b"b", b"", b"a" * 100_000)}
    assert len(keys) == 4
    assert len(blob_files(tmp_path / "objects")) == 4
    assert {store.get(key) for key in keys} == {b"a", b"b", b"", b"a" * 100_000}


def test_blob_is_written_to_a_temp_file_then_renamed(tmp_path, monkeypatch):
    store = ObjectStore(tmp_path / "objects")
    renames = []
    real_replace = os.replace

    def spy(src, dst):
        # At the moment of the rename the final blob must not exist yet, the temp must be whole.
        assert not Path(dst).exists()
        assert Path(src).read_bytes() == data
        renames.append((Path(src), Path(dst)))
        return real_replace(src, dst)

    monkeypatch.setattr(objects.os, "replace", spy)
    data = os.urandom(3 * 1024 * 1024 + 17)
    key = store.put_bytes(data)
    assert len(renames) == 1
    src, dst = renames[0]
    assert dst == store.path(key) and src.parent == dst.parent and src != dst
    assert not src.exists()
    assert blob_files(tmp_path / "objects") == [store.path(key)]  # no temp file left behind
    assert store.get(key) == data


def test_a_writer_dying_mid_write_leaves_no_blob(tmp_path, monkeypatch):
    store = ObjectStore(tmp_path / "objects")
    real_write = os.write
    calls = []

    def dying_write(fd, data):
        calls.append(len(data))
        real_write(fd, bytes(data[:10]))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(objects.os, "write", dying_write)
    with pytest.raises(OSError):
        store.put_bytes(b"x" * 1000)
    monkeypatch.undo()
    key = objects.hash_bytes(b"x" * 1000)
    assert calls, "the store never wrote"
    assert not store.path(key).exists()  # a reader never sees a half blob
    assert not ObjectStore(tmp_path / "objects").has(key)
    # The next writer succeeds and the blob is whole.
    assert store.put_bytes(b"x" * 1000) == key
    assert store.get(key) == b"x" * 1000


def test_put_if_small_respects_the_cap(tmp_path):
    store = ObjectStore(tmp_path / "objects", cap=100)
    small, exact, big = b"s" * 99, b"e" * 100, b"b" * 101
    assert store.put_if_small(objects.hash_bytes(small), small) is True
    assert store.put_if_small(objects.hash_bytes(exact), exact) is True
    assert store.put_if_small(objects.hash_bytes(big), big) is False
    assert store.has(objects.hash_bytes(small)) and store.has(objects.hash_bytes(exact))
    assert not store.has(objects.hash_bytes(big))
    assert sorted(path.read_bytes() for path in blob_files(tmp_path / "objects")) == [exact, small]


def test_cap_comes_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("VACANT_OBJECT_CAP", raising=False)
    assert ObjectStore(tmp_path).cap == DEFAULT_SIZE_CAP == 16 * 1024 * 1024
    monkeypatch.setenv("VACANT_OBJECT_CAP", "4096")
    assert ObjectStore(tmp_path).cap == 4096
    assert ObjectStore(tmp_path, cap=7).cap == 7  # an explicit cap wins
    monkeypatch.setenv("VACANT_OBJECT_CAP", "lots")
    assert ObjectStore(tmp_path).cap == DEFAULT_SIZE_CAP


def test_blobs_are_read_only(tmp_path):
    store = ObjectStore(tmp_path / "objects")
    key = store.put_bytes(b"keep me")
    assert store.path(key).stat().st_mode & 0o222 == 0


@pytest.mark.parametrize("size", [0, 1, 4 * 1024 * 1024, 4 * 1024 * 1024 + 1, 9 * 1024 * 1024 + 5])
def test_hash_file_matches_hash_bytes(tmp_path, size):
    data = os.urandom(size)
    path = tmp_path / "f"
    path.write_bytes(data)
    key, kept = hash_file(path, size)
    assert key == xxhash.xxh3_128_hexdigest(data)
    # Small files come back in memory (so the scanner reads them once); big ones do not.
    assert kept == (data if size <= 4 * 1024 * 1024 else None)
