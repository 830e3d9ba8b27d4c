"""The one glob language of vacant's files (the contract's `pinned` and `deliverables`,
`[store] exclude`), translated to a regular expression over workspace-relative paths with `/`:

- `*` and `?` stay within one path segment; `[abc]`, `[!abc]` a character class;
- `**/` spans any number of whole segments (none included), `**` anything;
- anchored at the workspace root (`*.md` is top-level only, `**/*.md` anywhere), and a pattern
  that names a directory covers everything below it.

Stdlib only (the hook reads `[store] exclude` on its hot path).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's, without importing typing: that costs each hook call 15 ms CPU (hook/lean.py)
if TYPE_CHECKING:
    import re  # at run time, imported where a pattern is made (vacant/core/lazyre.py says why)


def normal_glob(glob: str) -> str:
    """The glob as written, without what does not change its meaning: spaces around it, `./` or
    `/` at its start, a trailing `/`, Windows separators."""
    glob = glob.strip().replace("\\", "/").lstrip("/")
    while glob.startswith("./"):
        glob = glob[2:]
    return glob.rstrip("/") or "**"


def glob_regex(glob: str) -> str:
    """The regex (for `re.match`) of one normalised glob."""
    import re

    out: list[str] = []
    index = 0
    while index < len(glob):
        if glob.startswith("**/", index):
            out.append("(?:[^/]+/)*")
            index += 3
        elif glob.startswith("**", index):
            out.append(".*")
            index += 2
        elif glob[index] == "*":
            out.append("[^/]*")
            index += 1
        elif glob[index] == "?":
            out.append("[^/]")
            index += 1
        elif glob[index] == "[" and "]" in glob[index + 2:]:
            close = glob.index("]", index + 2)
            body = glob[index + 1:close]
            body = "^" + body[1:] if body.startswith("!") else body
            out.append("[" + body.replace("\\", "\\\\") + "]")
            index = close + 1
        else:
            out.append(re.escape(glob[index]))
            index += 1
    return "".join(out) + r"(?:/.*)?\Z"  # a matched directory includes what is under it


def compile_glob(glob: str) -> re.Pattern[str]:
    import re

    return re.compile(glob_regex(normal_glob(glob)))


def glob_matches(glob: str, rel: str) -> bool:
    """Whether the workspace-relative path `rel` is under `glob`."""
    return compile_glob(glob).match(rel) is not None
