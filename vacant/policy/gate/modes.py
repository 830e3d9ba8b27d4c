"""Arms and their mode line: a script under the arms directory says `MODE: READ` or `MODE: ACT`
in its own comment syntax; an arm without a readable mode is ACT. Stdlib only (hot path)."""

from __future__ import annotations

import os

from vacant.core.safeio import open_regular, read_capped

# -- arms and their mode line ---------------------------------------------------------------------

_HASH = ("#",)
_SLASH = ("//", "/*")
COMMENT_LEADERS = {
    **dict.fromkeys((".sh", ".bash", ".zsh", ".ksh", ".fish", ".py", ".rb", ".pl", ".r", ".ps1", ".awk", ".tcl",
                     ".jl", ".ex", ".exs", ".cr", ".nim", ".yaml", ".yml", ".toml", ".mk", ".nu"), _HASH),
    **dict.fromkeys((".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".go", ".rs", ".c", ".cc", ".cpp", ".java",
                     ".kt", ".kts", ".swift", ".scala", ".dart", ".groovy", ".cs", ".zig"), _SLASH),
    ".php": ("#", "//", "/*"),
    **dict.fromkeys((".lua", ".sql", ".hs", ".elm", ".ada"), ("--",)),
    **dict.fromkeys((".bat", ".cmd"), ("REM", "rem", "::", "@REM", "@rem")),
    **dict.fromkeys((".el", ".clj", ".lisp", ".scm", ".rkt"), (";",)),
    **dict.fromkeys((".erl", ".m", ".tex"), ("%",)),
    ".vbs": ("'",),
}
ANY_LEADER = ("#", "//", "/*", "--", ";", "%", "REM", "rem", "::", "'", "<!--")


def mode_of(text: str | bytes | None, name: str = "") -> str | None:
    """`READ` or `ACT` from an arm's header, else None: the mode line must come first (after an
    optional `#!` line), as a comment in the script's comment syntax."""
    if text is None:
        return None
    if isinstance(text, bytes):
        text = text[:8192].decode("utf-8", "replace")
    lines = text.lstrip("\ufeff").split("\n", 3)
    if lines and lines[0].startswith("#!"):
        lines = lines[1:]
    if lines and lines[0].strip().startswith("<?php"):
        lines = lines[1:]
    if not lines:
        return None
    if "MODE" not in lines[0]:  # what the pattern below needs in any match: most arms need no `re`
        return None
    import re

    leaders = COMMENT_LEADERS.get(os.path.splitext(name)[1].lower(), ANY_LEADER)
    line = lines[0].rstrip("\r")
    pattern = (r"^\s*(?:" + "|".join(re.escape(leader) for leader in leaders)
               + r")\s*MODE:\s*(READ|ACT)\s*(?:\*/|-->)?\s*$")
    match = re.match(pattern, line)
    return match.group(1) if match else None


def read_head(path: str) -> bytes | None:
    try:
        return read_capped(path, 8192, truncate=True)
    except OSError:
        return None


def file_hash(path: str) -> str | None:
    import xxhash

    try:
        fd = open_regular(path)
    except OSError:
        return None
    digest = xxhash.xxh3_128()
    with os.fdopen(fd, "rb") as handle:  # streamed: an arm of any size hashes in bounded memory
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
