"""The explicit registry of agent platforms: adding one is a module plus one line here.

Every platform module is stdlib-only and cheap to import (well under a millisecond each), so the
hook imports them all rather than looking one up by name at run time.
"""

from __future__ import annotations

from vacant.platforms import claude, command, opencode
from vacant.platforms.codex import platform as codex

PLATFORMS = {platform.name: platform for platform in (claude.PLATFORM, codex.PLATFORM, opencode.PLATFORM,
                                                      command.PLATFORM)}
ALIASES = {"claude-code": "claude"}


class UnknownPlatform(ValueError):
    pass


def load(name: str):
    """The platform registered as `name` (or one of its aliases)."""
    try:
        return PLATFORMS[ALIASES.get(name, name)]
    except (KeyError, TypeError):
        raise UnknownPlatform(f"unknown platform {name!r}: one of {', '.join(sorted(PLATFORMS))}") from None
