"""Ed25519 keys for shared records: the person's own signing key and the team's trusted keys.

The private key is 32 raw bytes at `~/.config/vacant/share-ed25519` (mode 0600, created on first
use, never inside a workspace), next to the HMAC key of `vacant/core/keys.py`, which nobody else can
verify and so cannot sign what others must trust.

The trusted keys are `.vacant-team-keys` at the repository root, read from the committed HEAD
version, not the working tree, so trusting a key takes an ordinary (reviewable) commit and an
uncommitted edit grants nothing. It is not inside `.vacant/`, which is vacant's git-ignored
state directory (and may move into `.git/`), and not in `vacant.toml`, so a change of trust never
hides in a change of checks. One key per line: `ed25519 <base64 raw public key> <name>`; `#`
starts a comment.

`cryptography` is imported here only, and only when a key is made, loaded or checked: `vacant
sync` and the reputation commands use it, the hook never does, and a reading from the sealed team
cache (vacant/share/team.py) checks nothing, so it does not load it.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vacant.core.keys import KeyFileError
from vacant.core.locations import user_config_dir
from vacant.share.teamkey import TEAM_KEY_SUFFIX, TEAM_KEYS_FILE  # noqa: F401 - named here for readers of keys

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

KEY_BYTES = 32
_LINE = re.compile(r"^ed25519\s+([A-Za-z0-9+/=_-]{43,44})(?:\s+(.*))?$")


def fingerprint(public_raw: bytes) -> str:
    return hashlib.sha256(public_raw).hexdigest()[:32]


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    text = text.replace("+", "-").replace("/", "_").rstrip("=")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass(frozen=True)
class Signer:
    private: Ed25519PrivateKey
    public_raw: bytes

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public_raw)

    def sign(self, message: bytes) -> str:
        return b64(self.private.sign(message))

    def team_line(self, name: str) -> str:
        """The line that makes this key trusted in `.vacant-team-keys`."""
        return f"ed25519 {base64.b64encode(self.public_raw).decode()} {name}"


def key_path() -> Path:
    return user_config_dir() / "share-ed25519"


def existing_signer() -> Signer | None:
    """The person's signing key if they have one (never creates it)."""
    return own_signer() if key_path().exists() else None


def own_signer() -> Signer:
    """The person's signing key, created atomically (0600) on first use."""
    path = key_path()
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        temp = path.with_name(f".share-ed25519.{os.getpid()}.tmp")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, os.urandom(KEY_BYTES))
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(temp, path)  # another process made one first: theirs wins
        except FileExistsError:
            pass
        finally:
            os.unlink(temp)
    data = path.read_bytes()
    if len(data) != KEY_BYTES:
        raise KeyFileError(f"{path} is not a vacant share key ({len(data)} bytes, expected {KEY_BYTES}): move it away")
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    private = Ed25519PrivateKey.from_private_bytes(data)
    raw = private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return Signer(private, raw)


@dataclass(frozen=True)
class TeamKey:
    fingerprint: str
    raw: bytes | None  # the raw public key; None in a view read from the sealed cache (names only)
    name: str


@dataclass
class TeamKeys:
    keys: dict[str, TeamKey]
    problems: list[str]  # lines that were not keys, said plainly
    _public: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def verify(self, author: str, message: bytes, signature: str) -> bool:
        key = self.keys.get(author)
        if key is None or key.raw is None:
            return False
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

        public = self._public.get(author)
        if public is None:
            public = self._public[author] = Ed25519PublicKey.from_public_bytes(key.raw)
        try:
            public.verify(unb64(signature), message)
        except (InvalidSignature, ValueError):
            return False
        return True


def parse_team_keys(text: str, source: str = TEAM_KEYS_FILE) -> TeamKeys:
    keys: dict[str, TeamKey] = {}
    problems = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        match = _LINE.match(line)
        raw = b""
        if match is not None:
            try:
                raw = unb64(match.group(1))
            except ValueError:
                raw = b""
        if match is None or len(raw) != KEY_BYTES:
            problems.append(f"{source}:{number}: not `ed25519 <base64 public key> <name>`")
            continue
        fp = fingerprint(raw)
        keys[fp] = TeamKey(fp, raw, (match.group(2) or "").strip() or fp[:8])
    return TeamKeys(keys, problems)
