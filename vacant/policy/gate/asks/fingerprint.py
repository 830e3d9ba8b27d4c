"""The workspace fingerprint an approval given with `--refuse-if-moved` is compared with: where the
workspace is, its git HEAD (through vacant/core/githead.py), and what its files hold (content, not
timestamps; a scan with a read-only copy of the store's Index). Not the action's fingerprint (the
normal form a card is matched by, policy/gate/rules.py `Action`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from vacant.core.githead import head_state
from vacant.core.locations import state_dir
from vacant.store.hasher import Index, Scanner


def git_head(root: Path) -> str | None:
    """The workspace's HEAD as the fingerprint keeps it (vacant.core.githead: linked worktrees too)."""
    return head_state(Path(root))


def workspace_fingerprint(root: Path) -> dict:
    """Where the workspace is and what it holds (content, not timestamps), without touching the
    recorder's index: a scan with a read-only copy of it."""
    import xxhash

    class FrozenIndex(Index):  # the scan reads the index, never writes it
        def replace_all(self, entries, clock_ns, ignore_stamp):  # noqa: ANN001
            pass

        def update(self, changes, clock_ns):  # noqa: ANN001
            pass

    state = state_dir(Path(root))
    state.mkdir(parents=True, exist_ok=True)
    index = FrozenIndex(state / "index")
    before = index.entries()
    result = Scanner(Path(root), index, None, state).scan()
    manifest = {rel: entry for rel, entry in before.items() if rel not in result.removed}
    manifest.update(result.added)
    manifest.update(result.changed)
    files = {rel: [e[0], None if e[0] == "d" else e[1], e[3], e[4]] for rel, e in manifest.items()}
    digest = xxhash.xxh3_128_hexdigest(json.dumps(files, sort_keys=True, separators=(",", ":")).encode())
    return {"root": os.path.realpath(root), "head": git_head(Path(root)), "files": digest, "count": len(files)}


def moved_since(root: Path, then: dict | None) -> str | None:
    """How the workspace moved since `then` (None: it did not)."""
    if not then:
        return "no fingerprint was taken at the approval"
    now = workspace_fingerprint(root)
    if now["root"] != then.get("root"):
        return f"it is now at {now['root']}, not {then.get('root')}"
    if now["head"] != then.get("head"):
        return f"git HEAD is now {str(now['head'])[:12]}, was {str(then.get('head'))[:12]}"
    if now["files"] != then.get("files"):
        return "its files changed"
    return None
