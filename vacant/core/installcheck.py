"""What `vacant init` wrote, fixed at install so later checks compare exactly (stdlib only: the
hook watch runs on every call).

- `entries_digest(path)`: the digest of vacant's own entries in a hook settings file, each whole
  (the matcher group and every handler in it: command, type, timeout, headers; a flat handler,
  Copilot's, is an entry of its own), never a substring
  test. A JSON settings file is read entry by entry, so the person's own settings may change
  around them; any other file (the OpenCode plugin, a TOML file) is vacant's whole file.
- `package_digest()`: the digest of the installed package's files, and `on_path()`: the `vacant`
  the person's PATH runs, with the digest of its file, for `vacant doctor` to compare.
"""

from __future__ import annotations

from vacant.core import leanjson as json  # not `import json`: 13 ms CPU of each hook call (vacant/hook/lean.py)
import os
import stat
from pathlib import Path

from vacant.core.sha import sha256

TYPE_CHECKING = False  # typing's, without importing typing: that costs each hook call 15 ms CPU (hook/lean.py)
if TYPE_CHECKING:  # never at run time: the hook's path imports no typing
    from typing import Any

MARKS = ("vacant-hook",)  # in every installed hook command (settings_file.hook_command)
HTTP_MARK = "X-Vacant-Token"  # an http hook to the workspace's daemon carries this header
READ_CAP = 4 << 20


def package_root() -> Path:
    """The installed package's directory (resolved when asked: the hook watch never needs it)."""
    return Path(__file__).resolve().parents[1]


def _ours(handler: object) -> bool:
    if not isinstance(handler, dict):
        return False
    if isinstance(handler.get("headers"), dict) and HTTP_MARK in handler["headers"]:
        return True
    return any(mark in str(handler.get("command", "")) or mark in str(handler.get("bash", "")) for mark in MARKS)


def _read(path: str) -> bytes | None:
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except (OSError, ValueError, TypeError):
        return None
    try:
        return os.read(fd, READ_CAP)
    except OSError:
        return None
    finally:
        os.close(fd)


def entries_digest(path: str) -> str | None:
    """None when the file is gone, unreadable or holds none of vacant's entries."""
    raw = _read(path)
    if raw is None:
        return None
    try:
        settings = json.loads(raw)
    except ValueError:
        settings = None
    if not isinstance(settings, dict):
        if not any(mark.encode() in raw for mark in MARKS):
            return None
        return "file:" + sha256(raw).hexdigest()
    hooks = settings.get("hooks")
    ours: dict[str, list[object]] = {}
    if isinstance(hooks, dict):
        for event, groups in hooks.items():
            for group in groups if isinstance(groups, list) else []:
                handlers = group.get("hooks") if isinstance(group, dict) else None
                handlers = [group] if handlers is None else handlers  # Copilot's flat handler is its own group
                if isinstance(handlers, list) and any(_ours(h) for h in handlers):
                    ours.setdefault(str(event), []).append(group)
    if not ours:
        return None
    return "entries:" + sha256(json.dumps(ours, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def entry_intact(entry: dict[str, Any]) -> bool:
    """The settings file still holds exactly the entries `vacant init` wrote (an install record
    from before digests were kept: still holds some)."""
    path = entry.get("path")
    if not isinstance(path, str):
        return True
    now = entries_digest(path)
    recorded = entry.get("digest")
    return now is not None if not isinstance(recorded, str) else now == recorded


def _files_digest(files: list[Path], base: Path) -> str:
    digest = sha256()
    for path in files:
        digest.update(str(path.relative_to(base)).encode() + b"\0")
        try:
            digest.update(sha256(path.read_bytes()).digest())
        except OSError:
            digest.update(b"unreadable")
    return digest.hexdigest()


def package_digest(package: Path | None = None) -> str:
    """Every source and asset file of the installed package (no caches)."""
    package = package_root() if package is None else package
    files = sorted(p for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                   and p.suffix not in (".pyc", ".pyo"))
    return _files_digest(files, package)


def on_path() -> dict[str, Any]:
    """The `vacant` the PATH runs: where it resolves and the digest of that file."""
    import shutil

    found = shutil.which("vacant")
    if not found:
        return {"path": None, "digest": None}
    real = os.path.realpath(found)
    try:
        digest = sha256(Path(real).read_bytes()).hexdigest()
    except OSError:
        digest = None
    return {"path": real, "digest": digest}
