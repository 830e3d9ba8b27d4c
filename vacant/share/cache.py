"""The share package's files in the state directory: plain JSON, and sealed caches of what was verified.

Contract:
- `load_json`/`save_json`: plain JSON for bookkeeping that decides nothing about trust (what was
  published, the last sync). A file that does not parse reads as the default.
- `load_sealed`/`save_sealed`: a cache of verified records. The file is one header line
  `vacant-sealed <format> <mac>` and the JSON payload; the MAC is HMAC-SHA256 under the person's
  own key (vacant/core/keys.py, never inside a workspace) over the cache's `key` and the payload.
  The key names what the cache was built from (for the team view: every author ref's commit and
  the team keys' blob ids at HEAD), so a cache of other refs, an edited, truncated or foreign
  file, or garbage all read as "no cache" and are rebuilt from the refs, never believed and
  never an error. Deleting a cache costs time only.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path
from typing import Any

from vacant.core.atomic import atomic_write
from vacant.core.keys import KeyFileError, user_key

SEALED_FORMAT = 1
_MAGIC = b"vacant-sealed"
_DOMAIN = b"vacant-share-cache\x00"


def load_json(path: Path, default: Any) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return default


def save_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(value))


def _mac(secret: bytes, key: str, payload: bytes) -> str:
    message = _DOMAIN + hashlib.sha256(key.encode()).digest() + payload
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


def _secret() -> bytes | None:
    try:
        return user_key()
    except (KeyFileError, OSError):
        return None  # no usable key: caches are neither read nor written (slower, never less safe)


def load_sealed(path: Path, key: str) -> Any | None:
    """The payload of the cache at `path` if it was sealed under this person's key for exactly
    `key`; None for anything else (missing, other key, edited, truncated, not ours)."""
    payload = load_sealed_bytes(path, key)
    try:
        return None if payload is None else json.loads(payload)
    except ValueError:
        return None


def load_sealed_bytes(path: Path, key: str) -> bytes | None:
    """`load_sealed`'s payload as the JSON bytes it was sealed as (for a cache that embeds it)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    header, newline, payload = data.partition(b"\n")
    parts = header.split(b" ")
    secret = _secret() if newline and len(parts) == 3 and parts[0] == _MAGIC else None
    if secret is None or parts[1] != str(SEALED_FORMAT).encode():
        return None
    if not hmac.compare_digest(parts[2], _mac(secret, key, payload).encode()):
        return None
    return payload


def save_sealed(path: Path, key: str, value: Any) -> None:
    save_sealed_bytes(path, key, encode(value))


def encode(value: Any) -> bytes:
    """A payload's JSON, as `save_sealed` writes it."""
    return json.dumps(value, separators=(",", ":")).encode()


def save_sealed_bytes(path: Path, key: str, payload: bytes) -> None:
    """`save_sealed` of a payload already encoded (`encode`, or JSON assembled from such)."""
    secret = _secret()
    if secret is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    header = b" ".join((_MAGIC, str(SEALED_FORMAT).encode(), _mac(secret, key, payload).encode()))
    atomic_write(path, header + b"\n" + payload)
