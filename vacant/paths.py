"""Per-user locations (never inside a workspace). Stdlib only."""

from __future__ import annotations

import os
from pathlib import Path


def user_data_dir() -> Path:
    """Reputation table, install backups: $VACANT_HOME, else $XDG_DATA_HOME/vacant."""
    override = os.environ.get("VACANT_HOME")
    if override:
        return Path(override)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "vacant"


def user_config_dir() -> Path:
    """The signing key lives here: $XDG_CONFIG_HOME/vacant (default ~/.config/vacant)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "vacant"
