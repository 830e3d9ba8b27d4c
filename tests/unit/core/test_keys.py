"""The per-user key: created once, 0600, outside any workspace; HMAC signatures over canonical JSON."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from vacant.core import keys

REPO = Path(__file__).resolve().parents[3]


pytestmark = pytest.mark.usefixtures("isolated_home")


@pytest.mark.no_key
def test_the_key_is_created_with_mode_0600_and_kept(tmp_path):
    path = tmp_path / "home" / ".config" / "vacant" / "key"
    assert not path.exists()
    key = keys.create_user_key()
    assert path.is_file() and path.read_bytes() == key and len(key) == 32
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert keys.user_key() == key and keys.create_user_key() == key
    assert [p.name for p in path.parent.iterdir()] == ["key"]  # no temp file left behind


@pytest.mark.no_key
def test_default_location_is_under_home_config(tmp_path, monkeypatch):
    monkeypatch.delenv("XDG_CONFIG_HOME")
    keys.create_user_key()
    assert (tmp_path / "home" / ".config" / "vacant" / "key").is_file()


@pytest.mark.no_key
def test_no_signer_but_the_person_creates_the_key(tmp_path):
    """Signing, verifying or a person's command outside a terminal never makes a key: the first
    to sign could be an agent's process, and its key would then verify its own approvals."""
    path = tmp_path / "home" / ".config" / "vacant" / "key"
    with pytest.raises(keys.KeyMissing, match="vacant init"):
        keys.sign({"a": 1})
    assert not keys.verify_signature({"a": 1}, "0" * 64)
    with pytest.raises(keys.KeyMissing):
        keys.person_key(interactive=False)
    assert not path.exists()
    key = keys.person_key(interactive=True)
    assert path.read_bytes() == key


@pytest.mark.no_key
def test_concurrent_creation_agrees_on_one_key(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    code = "import sys; from vacant.core.keys import create_user_key; sys.stdout.write(create_user_key().hex())"
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE) for _ in range(6)]
    outputs = {proc.communicate(timeout=30)[0] for proc in procs}
    assert len(outputs) == 1
    assert bytes.fromhex(outputs.pop().decode()) == keys.user_key()


def test_sign_and_verify():
    record = {"id": "f-1", "lines": [1, 2], "note": "ünïcode"}
    signature = keys.sign(record)
    assert len(signature) == 64
    assert keys.verify_signature(dict(reversed(list(record.items()))), signature)  # key order is irrelevant
    assert not keys.verify_signature({**record, "note": "edited"}, signature)
    assert not keys.verify_signature(record, signature.upper() + "0")
    assert not keys.verify_signature(record, None)
    assert not keys.verify_signature(record, "")


def test_another_users_key_does_not_verify(tmp_path, monkeypatch):
    record = {"a": 1}
    signature = keys.sign(record)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "other"))
    keys.create_user_key()
    assert not keys.verify_signature(record, signature)


@pytest.mark.no_key
def test_a_damaged_key_is_a_clear_error(tmp_path):
    path = tmp_path / "home" / ".config" / "vacant" / "key"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"short")
    path.chmod(0o600)
    with pytest.raises(keys.KeyFileError, match="not a vacant key"):
        keys.user_key()


def test_a_key_readable_by_others_is_tightened(tmp_path):
    path = tmp_path / "home" / ".config" / "vacant" / "key"
    path.chmod(0o644)
    with pytest.warns(UserWarning, match="0600"):
        keys.user_key()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
