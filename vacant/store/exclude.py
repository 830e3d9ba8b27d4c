"""`[store] exclude` in vacant.toml: paths whose contents vacant hashes but never stores.

    [store]
    exclude = ["secrets/**", ".env", "*.pem"]

Globs relative to the workspace root (vacant/core/globs.py: `*` and `?` stay within one path
segment, `**` spans any number of them, a pattern naming a directory covers everything below it). An excluded file
is still hashed (its changes are attributed like any other), but its bytes never reach the
object store, whether seen by a scan or read by the agent's Read tool; replay cannot restore
it (it counts as unrestorable). The contract's pydantic model validates the table for the CLI;
the hook reads it with tomllib only when vacant.toml has a `[store]` table (cached per file
state). Stdlib only (hot path).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from vacant.core.globs import glob_regex as _glob_regex
from vacant.core.globs import normal_glob

TYPE_CHECKING = False  # typing's, without importing typing: that costs each hook call 15 ms CPU (hook/lean.py)
if TYPE_CHECKING:
    import re  # at run time, imported where a pattern is made (vacant/core/lazyre.py says why)

_CACHE: dict[str, tuple[tuple[int, int], tuple[re.Pattern[str], ...]]] = {}
_HAS_STORE = rb"^\s*\[\s*store\s*\]|^\s*store\s*[.=]"  # compiled when a vacant.toml names `store` at all


def glob_regex(pattern: str) -> str:
    """The regex of one exclude glob (anchored at the workspace root; vacant/core/globs.py)."""
    return _glob_regex(normal_glob(pattern))


def patterns(root: Path) -> tuple[re.Pattern[str], ...]:
    """The compiled exclude globs of this workspace (none when vacant.toml has no [store])."""
    path = os.path.join(str(root), "vacant.toml")
    try:
        info = os.stat(path)
    except OSError:
        return ()
    stamp = (info.st_size, info.st_mtime_ns)
    cached = _CACHE.get(path)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    compiled = _read(path)
    _CACHE[path] = (stamp, compiled)
    return compiled


def _read(path: str) -> tuple[re.Pattern[str], ...]:
    try:
        with open(path, "rb") as handle:
            data = handle.read(1 << 20)
    except OSError:
        return ()
    if b"store" not in data:  # what _HAS_STORE needs in any match: a contract without it needs no `re`
        return ()
    import re

    if not re.search(_HAS_STORE, data, re.MULTILINE):
        return ()
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10
        import tomli as tomllib
    try:
        table = tomllib.loads(data.decode("utf-8")).get("store", {})
    except (UnicodeDecodeError, ValueError):
        return ()  # the CLI (`vacant contract list`) says what is wrong with it
    globs = table.get("exclude", []) if isinstance(table, dict) else []
    return tuple(re.compile(glob_regex(g)) for g in globs if isinstance(g, str) and g.strip())


def excluded(root: Path, rel: str) -> bool:
    """Whether a workspace-relative path is kept out of the object store."""
    compiled = patterns(root)
    if not compiled or not rel:
        return False
    rel = rel.replace(os.sep, "/").lstrip("./") if rel.startswith("./") else rel.replace(os.sep, "/")
    return any(pattern.match(rel) for pattern in compiled)
