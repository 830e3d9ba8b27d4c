"""The warm `vacant reputation`: the exact text the command printed, sealed, printed again while
nothing it was computed from has changed. It is read before anything else is imported (an
interpreter start, a few dozen `stat` calls and one HMAC), so it imports the `os` module and the
interpreter's own SHA-256 only.

Contract:
- **What the text is computed from**, as `inputs` sees it: the working directory, the variables
  that steer git and vacant (`GIT_*`, `VACANT_*`, `XDG_*`, `HOME`), the person's key file, the
  local reputation table (and its journal and WAL files), and for each ancestor of the working
  directory what its `.git` and `.vacant` are and its entry in the install registry; in every ancestor's
  git directory, `HEAD`, the branch it names, `packed-refs` and every file under
  `refs/vacant/authors/`. A file is named by its inode, size, mode, owner and modification time,
  a directory listing by its sorted names. This is a superset of what the team view's key (refs
  and the team keys at HEAD, vacant/share/teamkey.py) and the local table depend on: any change
  that could change the text changes it, and the text is computed again.
- **The racy rule** (git's, for its index): an input modified less than `RACY_NS` before the
  inputs were read (one second where the file system keeps whole seconds) could change again
  within the same timestamp unseen, so a key that holds one is never answered from.
- **Sealed** like the share caches (vacant/share/cache.py): HMAC-SHA256 under the person's own key
  over the inputs and the text. A warm file another key sealed, edited, truncated or made for
  other inputs is not answered from; it is never an error, only the slower full answer.
- **Not warmed:** a `.git` that is a file (a linked worktree or submodule), a `commondir`, a
  reftable repository, a key file others can read or of the wrong size. The full answer runs.
"""

from __future__ import annotations

import os
from stat import S_ISDIR as stat_isdir
from stat import S_ISLNK as stat_islnk
from time import time_ns

from vacant import __version__
from vacant.core.sha import sha256

FORMAT = b"vacant-warm 1"
RACY_NS = 100_000_000  # well above Linux's coarse clock tick (at most 10 ms), for sub-second file systems
RACY_WHOLE_SECONDS_NS = 2_000_000_000  # FAT and old ext3 keep whole (or even) seconds
_ENV_PREFIXES = ("GIT_", "VACANT_", "XDG_")
_BLOCK = 64
_AUTHORS = ("refs", "vacant", "authors")
_KEY_BYTES = 32
_MAX_TEXT = 8 << 20


class NotWarm(Exception):
    """These inputs are not answered warm (see the module's contract)."""


def hmac_sha256(key: bytes, message: bytes) -> str:
    """RFC 2104 HMAC over SHA-256, without the hmac/hashlib modules (and OpenSSL's load)."""
    if len(key) > _BLOCK:
        key = sha256(key).digest()
    key = key.ljust(_BLOCK, b"\0")
    inner = sha256(bytes(b ^ 0x36 for b in key) + message).digest()
    return sha256(bytes(b ^ 0x5C for b in key) + inner).hexdigest()


def variant_of(args: list[str]) -> str | None:
    """`reputation [--json] [--local]` in any order, as one name; None for any other arguments."""
    if not args or args[0] != "reputation" or len(set(args[1:])) != len(args[1:]) \
            or not set(args[1:]) <= {"--json", "--local"}:
        return None
    return ("json" if "--json" in args else "text") + ("-local" if "--local" in args else "")


def _home() -> str:
    return os.environ.get("HOME") or os.path.expanduser("~")


def data_dir() -> str:
    """vacant.core.locations.user_data_dir, as a string (a test checks they agree)."""
    return os.environ.get("VACANT_HOME") or os.path.join(
        os.environ.get("XDG_DATA_HOME") or os.path.join(_home(), ".local", "share"), "vacant")


def key_file() -> str:
    """vacant.core.keys.key_path, as a string (a test checks they agree)."""
    return os.path.join(os.environ.get("XDG_CONFIG_HOME") or os.path.join(_home(), ".config"), "vacant", "key")


def registry_file(directory: str) -> str:
    """vacant.core.locations.registry_path, as a string (a test checks they agree)."""
    digest = sha256(os.path.realpath(directory).encode("utf-8", "surrogateescape")).hexdigest()[:24]
    return os.path.join(data_dir(), "installs", f"ws-{digest}.json")


class _Inputs:
    """The inputs' description, built up line by line, and the newest racy modification seen."""

    def __init__(self, now_ns: int) -> None:
        self.lines: list[str] = []
        self.now_ns = now_ns

    def add(self, label: str, value: str) -> None:
        self.lines.append(f"{label}\t{value}")

    def file(self, path: str) -> os.stat_result | None:
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            self.add(path, "-")
            return None
        except OSError as error:
            raise NotWarm(f"{path}: {error}") from None
        whole_seconds = info.st_mtime_ns % 1_000_000_000 == 0
        if info.st_mtime_ns > self.now_ns - (RACY_WHOLE_SECONDS_NS if whole_seconds else RACY_NS):
            raise NotWarm(f"{path} changed too recently to be told apart from a later change")
        self.add(path, f"{info.st_ino}:{info.st_size}:{info.st_mode:o}:{info.st_uid}:{info.st_mtime_ns}")
        return info

    def kind(self, path: str) -> str:
        """Only what a path is (a directory's own times change with every file git locks in it)."""
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            found = "-"
        except OSError as error:
            raise NotWarm(f"{path}: {error}") from None
        else:
            found = "dir" if stat_isdir(mode) else "link" if stat_islnk(mode) else "file"
        self.add(path, found)
        return found

    def tree(self, path: str) -> None:
        """A directory, every name in it and every file below it."""
        if self.file(path) is None:
            return
        try:
            names = sorted(os.listdir(path))
        except OSError as error:
            raise NotWarm(f"{path}: {error}") from None
        self.add(path + "/", "\0".join(names))
        for name in names:
            child = os.path.join(path, name)
            if os.path.isdir(child) and not os.path.islink(child):
                self.tree(child)
            else:
                self.file(child)


def _git_directory(inputs: _Inputs, git_dir: str) -> None:
    if os.path.lexists(os.path.join(git_dir, "commondir")) or os.path.lexists(os.path.join(git_dir, "reftable")):
        raise NotWarm(f"{git_dir}: a linked worktree or a reftable repository")
    head_path = os.path.join(git_dir, "HEAD")
    inputs.file(head_path)
    try:
        with open(head_path, "rb") as handle:
            head = handle.read(4096).decode("utf-8", "replace").strip()
    except OSError:
        head = ""
    inputs.add(head_path + "#", head)
    if head.startswith("ref: refs/"):
        inputs.file(os.path.join(git_dir, *head[len("ref: "):].split("/")))
    inputs.file(os.path.join(git_dir, "packed-refs"))
    inputs.tree(os.path.join(git_dir, *_AUTHORS))


def described_now(variant: str) -> bytes | None:
    """The inputs of `variant` as they are now, to seal a text computed after this; None: not warm."""
    try:
        return inputs(variant, time_ns())
    except (NotWarm, OSError):
        return None


def inputs(variant: str, now_ns: int) -> bytes:
    """What the text of `variant` (the command's arguments) is computed from right now, as bytes;
    NotWarm when these inputs are never answered warm."""
    found = _Inputs(now_ns)
    cwd = os.path.realpath(os.getcwd())
    found.add("format", f"{FORMAT.decode()} vacant {__version__}")
    found.add("variant", variant)
    found.add("cwd", cwd)
    for name in sorted(os.environ):
        if name.startswith(_ENV_PREFIXES) or name == "HOME":
            found.add("env " + name, os.environ[name])
    found.file(key_file())
    table = os.path.join(data_dir(), "reputation.sqlite")
    for suffix in ("", "-journal", "-wal", "-shm"):
        found.file(table + suffix)
    directory = cwd
    while True:
        found.kind(os.path.join(directory, ".vacant"))
        found.file(registry_file(directory))
        dot = os.path.join(directory, ".git")
        what = found.kind(dot)
        if what == "dir":
            _git_directory(found, dot)
        elif what != "-":
            raise NotWarm(f"{dot} is not a directory (a linked worktree or a submodule)")
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return "\n".join(found.lines).encode("utf-8", "surrogateescape")


def _person_key() -> bytes:
    path = key_file()
    try:
        info = os.stat(path)
        with open(path, "rb") as handle:
            key = handle.read(_KEY_BYTES + 1)
    except OSError as error:
        raise NotWarm(f"no usable key: {error}") from None
    if info.st_mode & 0o077 or len(key) != _KEY_BYTES:
        raise NotWarm("the key file is not one the full command would use as it is")
    return key


def _same(a: bytes, b: bytes) -> bool:
    """Equal, in time that does not depend on where they differ (hmac.compare_digest, unimported)."""
    if len(a) != len(b):
        return False
    differ = 0
    for x, y in zip(a, b):
        differ |= x ^ y
    return differ == 0


def warm_path(variant: str) -> str:
    digest = sha256(f"{os.path.realpath(os.getcwd())}\0{variant}".encode("utf-8", "surrogateescape")).hexdigest()
    return os.path.join(data_dir(), "warm", f"reputation-{digest[:24]}")


def _mac(key: bytes, described: bytes, text: bytes) -> str:
    return hmac_sha256(key, FORMAT + b"\0" + sha256(described).digest() + text)


def seal(variant: str, described: bytes, text: str) -> None:
    """Keep `text` as the answer to `variant` for the inputs `described` (read before the text was
    computed, so a change meanwhile makes it stale at once). Quietly nothing when it cannot be kept."""
    from vacant.core.atomic import atomic_write

    data = text.encode("utf-8", "surrogateescape")
    try:
        mac = _mac(_person_key(), described, data)
        path = warm_path(variant)
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        atomic_write(path, FORMAT + b" " + mac.encode() + b" " + str(len(described)).encode() + b"\n"
                     + described + data, mode=0o600)
    except (NotWarm, OSError):
        pass


def answer(variant: str, now_ns: int) -> str | None:
    """The kept text for `variant` if it was sealed under the person's key for exactly the inputs
    there are now; None otherwise (nothing kept, inputs changed or racy, not ours, damaged)."""
    try:
        with open(warm_path(variant), "rb") as handle:
            data = handle.read(_MAX_TEXT + 1)
        header, _, rest = data.partition(b"\n")
        magic_format, mac, length = header.rsplit(b" ", 2)
        size = int(length)
        described, text = rest[:size], rest[size:]
        if magic_format != FORMAT or len(described) != size or len(data) > _MAX_TEXT:
            return None
        if described != inputs(variant, now_ns):
            return None
        if not _same(_mac(_person_key(), described, text).encode(), mac):
            return None
        return text.decode("utf-8", "surrogateescape")
    except (NotWarm, OSError, ValueError):
        return None
