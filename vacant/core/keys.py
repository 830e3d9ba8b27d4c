"""The per-user signing key (`~/.config/vacant/key`): flags and human decisions are HMAC-signed.

The key is 32 random bytes, mode 0600, in the user's config directory and never inside a
workspace. Only the person creates it: `vacant init`, or a command that signs for the person
(`vacant approve`, `vacant flag`, …) run in a terminal. Nothing else does, a hook above all: a key
made by whoever signs first could be the agent's, planted before the person's first approval.
Without a key nothing verifies (an approval, a flag), so a missing key fails closed; so does a key
file with more than one name (a hard link elsewhere would read it where no wall hides it). A signature is HMAC-SHA256 over the canonical JSON of an object (sorted
keys, no spaces), so any edit of a signed record, by hand or by an agent, fails verification.
"""

from __future__ import annotations

import json
import os
import stat
import warnings
from pathlib import Path

from vacant.core.atomic import create_secret
from vacant.core.locations import user_config_dir

KEY_BYTES = 32


class KeyFileError(RuntimeError):
    """The key file exists but cannot be used (one sentence saying what to do)."""


class KeyMissing(KeyFileError):
    """No key yet, and this process may not create it (one sentence saying who can)."""


def key_path() -> Path:
    return user_config_dir() / "key"


def user_key() -> bytes:
    """The user's key; `KeyMissing` when the person has not created it yet."""
    path = key_path()
    try:
        return _read(path)
    except FileNotFoundError:
        raise KeyMissing(f"there is no vacant key yet ({path}): the person creates it with `vacant init`, "
                         "or by running this command in a terminal") from None


def person_key(interactive: bool) -> bytes:
    """The key for a command the person runs: created when missing only if `interactive` (stdin is a
    terminal; an agent's tool commands have none), else `KeyMissing`."""
    try:
        return user_key()
    except KeyMissing:
        if not interactive:
            raise
    return create_user_key()


def create_user_key() -> bytes:
    """The user's key, created (atomically, 0600) if missing; a key already there is kept."""
    path = key_path()
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    create_secret(path, os.urandom(KEY_BYTES))
    return _read(path)


def _read(path: Path) -> bytes:
    info = path.stat()
    if info.st_nlink > 1:  # another name reads the same bytes, where no wall hides it
        raise KeyFileError(
            f"{path} has {info.st_nlink} names (a hard link to it elsewhere, perhaps made before the wall went up, "
            f"reads it from where the wall does not hide it): find them with `find / -xdev -samefile {path}` and "
            "remove the others, or move the key away to create a new one (flags signed with it then show as tampered)"
        )
    if stat.S_IMODE(info.st_mode) & 0o077:
        warnings.warn(f"{path} was readable by others: its mode is now 0600", stacklevel=3)
        os.chmod(path, 0o600)
    data = path.read_bytes()
    if len(data) != KEY_BYTES:
        raise KeyFileError(
            f"{path} is not a vacant key ({len(data)} bytes, expected {KEY_BYTES}): "
            "move it away to create a new one (flags signed with the old key will then show as tampered)"
        )
    return data


def canonical(obj: object) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def sign(obj: object) -> str:
    """HMAC-SHA256 (hex) of `obj`'s canonical JSON under the user's key."""
    import hashlib  # signing happens on a person's command or an ACT call, never on an ordinary hook call
    import hmac

    return hmac.new(user_key(), canonical(obj), hashlib.sha256).hexdigest()


def verify_signature(obj: object, signature: object) -> bool:
    """Whether `signature` is the key's over `obj`; never, while there is no key."""
    if not isinstance(signature, str):
        return False
    try:
        expected = sign(obj)
    except (TypeError, ValueError, KeyMissing):
        return False
    import hmac

    # bytes: compare_digest raises on a str with non-ASCII characters (a forged signature may hold any)
    return hmac.compare_digest(expected.encode(), signature.encode("utf-8", "surrogateescape"))
