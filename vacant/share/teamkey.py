"""Which repository a command shares, what a cached team view is built from, and where the caches
lie: light enough to import on a warm `vacant reputation` (no record parsing, no cryptography).

A view's key is every author ref's name and commit, the team keys' entries at HEAD (mode, blob
id, path: what decides trust) and the kinds read. Any change of a ref (a sync, a rewrite, a
deletion) or of trust (a key added or removed by a commit) gives another key, so every cache sealed
under the old one (vacant/share/cache.py) is rebuilt.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from vacant.core.locations import WorkspaceError, find_root, new_root, state_dir
from vacant.share.gitstore import AUTHORS, GitStore

TEAM_KEYS_FILE = ".vacant-team-keys"  # a directory of `<name>.pub` files (one per person), or the older single file
TEAM_KEY_SUFFIX = ".pub"
VIEW_FORMAT = 4  # part of every key: a change of what a cached view holds rebuilds every cache (2: snapshots; 3: a run counted by its record's name; 4: the summary's texts joined)


def repository_root(start: Path) -> Path:
    """The workspace whose records a command shares: the nearest `.vacant/` ancestor, unless a git
    checkout lies between (a stray `.vacant/` above a clone never hijacks the clone's records)."""
    found = find_root(start)
    checkout = new_root(start)
    return checkout if (checkout / ".git").exists() and found in checkout.parents else found


def open_store(root: Path) -> GitStore:
    store = GitStore(root)
    if not store.is_repository():
        raise WorkspaceError(f"{root} is not a git repository: vacant sync shares records through its git remote")
    return store


def trust_input(store: GitStore) -> str:
    """What decides trust, as git names it: the team keys' entries at HEAD (mode, blob id, path)."""
    proc = store.git("ls-tree", "-r", "--full-tree", "HEAD", "--", TEAM_KEYS_FILE, ok=(0, 128))
    return proc.stdout.decode(errors="replace") if proc.returncode == 0 else ""


def view_key(store: GitStore, kinds: tuple[str, ...], prefix: str = AUTHORS) -> tuple[str, dict[str, str]]:
    """What a view of `kinds` is built from right now, as one string; and the refs under `prefix`."""
    refs = store.refs(prefix)
    key = json.dumps({"format": VIEW_FORMAT, "kinds": sorted(kinds), "prefix": prefix, "refs": sorted(refs.items()),
                      "trust": trust_input(store)})
    return key, refs


def cache_dir(root: Path) -> Path:
    return state_dir(root) / "share" / "team"


def view_path(root: Path, kinds: tuple[str, ...], prefix: str = AUTHORS) -> Path:
    name = "-".join(sorted(kinds)) + "-" + hashlib.sha256(prefix.encode()).hexdigest()[:8]
    return cache_dir(root) / f"view-{name}.json"
