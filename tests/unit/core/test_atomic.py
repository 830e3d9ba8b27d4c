"""atomic_write: whole or nothing under concurrent writers; permission bits kept; no temp left."""

from __future__ import annotations

import os
import stat
from concurrent.futures import ProcessPoolExecutor

import pytest

from vacant.core.atomic import atomic_write, create_secret


def _write_many(args: tuple[str, int]) -> None:
    path, writer = args
    for round_number in range(60):
        atomic_write(path, (f"{writer}:{round_number}\n" * (2000 + writer)).encode())


def test_concurrent_writers_never_leave_a_mixed_file(tmp_path):
    target = tmp_path / "state.json"
    with ProcessPoolExecutor(max_workers=4) as pool:
        list(pool.map(_write_many, [(str(target), writer) for writer in range(4)]))
    lines = target.read_text().splitlines()
    assert len(set(lines)) == 1 and len(lines) == 2000 + int(lines[0].split(":")[0])
    assert [entry.name for entry in tmp_path.iterdir()] == ["state.json"]


def test_an_existing_file_keeps_its_mode_and_a_new_one_gets_the_given_mode(tmp_path):
    kept = tmp_path / "settings.json"
    kept.write_text("{}")
    os.chmod(kept, 0o640)
    atomic_write(kept, "{\"a\": 1}")
    assert stat.S_IMODE(kept.stat().st_mode) == 0o640 and kept.read_text() == "{\"a\": 1}"
    fresh = tmp_path / "key"
    atomic_write(fresh, b"secret", mode=0o600)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o600


def test_a_failed_write_leaves_the_old_file_and_no_temp(tmp_path):
    target = tmp_path / "run.json"
    target.write_text("old")
    with pytest.raises(TypeError):
        atomic_write(target, 12345)  # not bytes: fails before the swap
    assert target.read_text() == "old"
    assert [entry.name for entry in tmp_path.iterdir()] == ["run.json"]


def _create(args: tuple[str, bytes]) -> None:
    create_secret(args[0], args[1])


def test_concurrent_creators_of_a_secret_agree_on_one_and_it_is_never_replaced(tmp_path):
    target = tmp_path / "cfg" / "key"
    candidates = [os.urandom(32) for _ in range(8)]
    with ProcessPoolExecutor(4) as pool:
        list(pool.map(_create, [(str(target), data) for data in candidates]))
    assert target.read_bytes() in candidates
    assert stat.S_IMODE(target.stat().st_mode) == 0o600 and stat.S_IMODE(target.parent.stat().st_mode) == 0o700
    assert [entry.name for entry in target.parent.iterdir()] == ["key"]  # no temp file left
    kept = target.read_bytes()
    create_secret(target, b"another")
    assert target.read_bytes() == kept
