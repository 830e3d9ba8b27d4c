"""Facts about the registered agent platforms that the layers below `vacant.platforms` need
(the gate's record guard, the exporters), which cannot import the registry: it registers them
here when it is imported (vacant/platforms/all_platforms.py). Every process that records, gates
or exports imports the registry first (the hook, the daemon, the CLI); a reader that finds
nothing registered raises `NotRegistered` (the gate then fails closed).
Stdlib only (hot path).
"""

from __future__ import annotations

PROVIDERS: dict[str, str] = {}  # cell platform -> model provider (GenAI conventions' naming)
SETTINGS_IN_WORKSPACE: list[str] = []  # hook settings files, relative to a workspace
SETTINGS_IN_HOME: list[str] = []  # … and to the home directory


class NotRegistered(RuntimeError):
    """No platform registered its facts: the registry was never imported in this process."""


def register(cell_platform: str, provider: str | None, in_workspace: tuple[str, ...], in_home: tuple[str, ...]) -> None:
    if provider:
        PROVIDERS[cell_platform] = provider
    SETTINGS_IN_WORKSPACE.extend(rel for rel in in_workspace if rel not in SETTINGS_IN_WORKSPACE)
    SETTINGS_IN_HOME.extend(rel for rel in in_home if rel not in SETTINGS_IN_HOME)
    REGISTERED.append(cell_platform)


REGISTERED: list[str] = []


def provider(cell_platform: str) -> str:
    """The model provider of a cell platform (its own name when it has none); raises when nothing
    was registered (an export would otherwise name every model by its platform, silently)."""
    if not REGISTERED:
        raise NotRegistered("the platform registry was not loaded: no model provider is known")
    return PROVIDERS.get(cell_platform, cell_platform)


def settings_paths() -> tuple[list[str], list[str]]:
    """(in the workspace, in the home directory); raises when nothing was registered."""
    if not REGISTERED:
        raise NotRegistered("the platform registry was not loaded: no hook settings are known to guard")
    return SETTINGS_IN_WORKSPACE, SETTINGS_IN_HOME
