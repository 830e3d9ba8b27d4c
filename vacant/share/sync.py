"""`vacant sync`: publish one's own records, fetch the team's, merge by union, push; never force.

Contract:
- Fetch maps the remote's `refs/vacant/authors/*` onto vacant's own tracking refs
  `refs/vacant/remotes/<remote>/authors/*` (forced there only: they mirror the remote, like git's
  remote-tracking branches). No other ref of the repository is read from or written to.
- Merging an author ref is a fast-forward when the remote's commit descends from ours and keeps
  every entry we hold, else a commit whose tree is the union of both sides' entries and whose
  parents are both; each ref moves by compare-and-swap. So no sync ever drops a record we had,
  and since entries are content-addressed, a union never holds a record twice.
- Push sends only refs that differ from the remote's, without force. A rejected ref (someone
  pushed first) means: fetch again, merge again, push again, up to `ATTEMPTS` times with a
  growing, jittered pause. Two clones pushing at once therefore converge on the union.
- A sync ends by verifying what it fetched into the sealed team cache (vacant/share/team.py,
  fold.py): the refs changed now, so the next `vacant reputation` or `blame --team` reads the
  cache instead of every record.
"""

from __future__ import annotations

import hashlib
import random
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vacant.core.locations import (
    WorkspaceError,
    list_runs,
    state_dir,
)
from vacant.share.cache import load_json, save_json
from vacant.share.fold import team_summary
from vacant.share.gitstore import AUTHORS, GitError, GitStore
from vacant.share.publish import publish, run_stamp
from vacant.share.records import ENTRY
from vacant.share.publish import cache_path as published_path
from vacant.share.signing import Signer, existing_signer, own_signer
from vacant.share.team import FINGERPRINT, read_team, team_keys
from vacant.share.teamkey import open_store

TRACKING = "refs/vacant/remotes/"
ATTEMPTS = 10
CAS_ATTEMPTS = 20
_REMOTE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


@dataclass
class SyncResult:
    remote: str
    author: str
    trusted: bool = False  # whether one's own key is in the team keys at HEAD (else others reject it)
    published_runs: int = 0
    published_reviews: int = 0
    skipped: list[str] = field(default_factory=list)
    remote_authors: int = 0
    fast_forwarded: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)
    pushed: list[str] = field(default_factory=list)
    attempts: int = 0
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def remote_id(store: GitStore, remote: str) -> str:
    """The tracking namespace for a remote: its name when configured, else a hash of the URL."""
    names = store.git("remote").stdout.decode().split()
    if remote in names and _REMOTE_NAME.match(remote):
        return remote
    if remote in names or remote.startswith("-"):
        raise WorkspaceError(f"remote {remote!r}: use a remote name of letters, digits, '.', '_' or '-'")
    return "url-" + hashlib.sha256(remote.encode()).hexdigest()[:16]


def tracking_prefix(rid: str) -> str:
    return f"{TRACKING}{rid}/authors/"


def union_commit(store: GitStore, local: str, remote: str) -> str:
    """A commit whose tree holds every well-named entry of both sides, parents both."""
    mine = {e.path: e.oid for e in store.list_tree(local) if ENTRY.match(e.path)}
    theirs = {e.path: e.oid for e in store.list_tree(remote) if ENTRY.match(e.path)}
    clashes = [p for p in mine.keys() & theirs.keys() if mine[p] != theirs[p]]
    merged = {**theirs, **mine}
    if clashes:  # one name, two contents: keep the one whose bytes match the name, both sides alike
        blobs = store.read_blobs(sorted({mine[p] for p in clashes} | {theirs[p] for p in clashes}))
        for path in clashes:
            name = path.replace("/", "")[len(path.split("/")[0]):]
            good = [o for o in (mine[path], theirs[path]) if hashlib.sha256(blobs.get(o, b"")).hexdigest() == name]
            merged[path] = min(good or [mine[path], theirs[path]])
    return store.commit(store.write_tree(merged), [local, remote], "vacant sync: union")


def _keeps_all(store: GitStore, older: str, newer: str) -> bool:
    """A descendant that dropped or replaced entries is merged, not fast-forwarded: records only
    ever join a ref through vacant, whatever someone pushed on top of it."""
    before = {(e.path, e.oid) for e in store.list_tree(older) if ENTRY.match(e.path)}
    after = {(e.path, e.oid) for e in store.list_tree(newer)}
    return before <= after


def merge_author(store: GitStore, ref: str, remote: str, local: str | None) -> str:
    """Bring the remote's version of one author ref in; 'ahead', 'fast_forward' or 'merged'."""
    for _ in range(CAS_ATTEMPTS):
        if local == remote or (local is not None and store.is_ancestor(remote, local)):
            return "ahead"
        if local is None or (store.is_ancestor(local, remote) and _keeps_all(store, local, remote)):
            if store.update_ref(ref, remote, local):
                return "fast_forward"
        elif store.update_ref(ref, union_commit(store, local, remote), local):
            return "merged"
        local = store.refs(ref).get(ref)
    raise GitError(f"{ref} kept moving while vacant merged it ({CAS_ATTEMPTS} attempts): run vacant sync again")


def _merge_all(store: GitStore, rid: str, result: SyncResult) -> dict[str, str]:
    """Merge every remote author ref into ours; the remote's refs (fingerprint -> commit)."""
    prefix = tracking_prefix(rid)
    theirs = {r[len(prefix):]: o for r, o in store.refs(prefix).items() if FINGERPRINT.match(r[len(prefix):])}
    ours = {r[len(AUTHORS):]: o for r, o in store.refs(AUTHORS).items()}
    result.remote_authors = len(theirs)
    for author, commit in sorted(theirs.items()):
        outcome = merge_author(store, AUTHORS + author, commit, ours.get(author))
        if outcome == "fast_forward" and author not in result.fast_forwarded:
            result.fast_forwarded.append(author)
        elif outcome == "merged" and author not in result.merged:
            result.merged.append(author)
    return theirs


def sync(root: Path, remote: str = "origin", signer: Signer | None = None, attempts: int = ATTEMPTS) -> SyncResult:
    started = time.monotonic()
    store = open_store(root)
    signer = signer if signer is not None else own_signer()
    rid = remote_id(store, remote)
    result = SyncResult(remote, signer.fingerprint, signer.fingerprint in team_keys(store).keys)
    made = publish(root, store, signer)
    result.published_runs, result.published_reviews, result.skipped = made.runs, made.reviews, made.skipped
    for attempt in range(1, attempts + 1):
        result.attempts = attempt
        store.fetch(remote, [f"+{AUTHORS}*:{tracking_prefix(rid)}*"])
        theirs = _merge_all(store, rid, result)
        ours = {r[len(AUTHORS):]: o for r, o in store.refs(AUTHORS).items() if FINGERPRINT.match(r[len(AUTHORS):])}
        updates = {AUTHORS + a: o for a, o in ours.items() if theirs.get(a) != o}
        outcomes = store.push(remote, updates)
        for outcome in outcomes:
            if outcome.ok:
                author = outcome.ref[len(AUTHORS):]
                store.update_ref(tracking_prefix(rid) + author, updates[outcome.ref], theirs.get(author))
                if outcome.flag != "=" and author not in result.pushed:
                    result.pushed.append(author)
        if all(o.ok for o in outcomes):
            break
        if attempt == attempts:
            raise GitError(f"the remote kept rejecting vacant's push after {attempts} attempts "
                           "(others are pushing right now): nothing is lost, run vacant sync again")
        time.sleep(random.uniform(0.05, 0.25) * attempt)
    team_summary(root, store)  # the refs just moved: verify now, so the next reputation or blame reads the cache
    result.seconds = round(time.monotonic() - started, 3)
    save_json(last_sync_path(root), {"at": time.time(), **result.to_json()})
    return result


def last_sync_path(root: Path) -> Path:
    return state_dir(root) / "share" / "last-sync.json"


def rejected_by_cause(rejected: list[Any]) -> list[dict[str, Any]]:
    """The rejected records grouped by why, most first: one line per cause, however many records."""
    counts: dict[str, int] = {}
    for item in rejected:
        counts[item.reason] = counts.get(item.reason, 0) + 1
    return [{"reason": reason, "records": n} for reason, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def status(root: Path, remote: str = "origin") -> dict[str, Any]:
    """Ahead/behind per author (as of the last fetch), the last sync, and every rejected record."""
    store = open_store(root)
    rid = remote_id(store, remote)
    signer = existing_signer()
    view = read_team(root, store)
    prefix = tracking_prefix(rid)
    theirs = {r[len(prefix):]: o for r, o in store.refs(prefix).items()}
    ours = {r[len(AUTHORS):]: o for r, o in store.refs(AUTHORS).items()}
    authors = []
    for author in sorted(set(theirs) | set(ours)):
        if not FINGERPRINT.match(author):
            continue
        mine = {e.path for e in store.list_tree(ours[author])} if author in ours else set()
        other = {e.path for e in store.list_tree(theirs[author])} if author in theirs else set()
        key = view.keys.keys.get(author)
        authors.append({"author": author, "name": key.name if key else None, "trusted": key is not None,
                        "records": len(mine), "ahead": len(mine - other), "behind": len(other - mine)})
    published = load_json(published_path(root), {}).get(signer.fingerprint, {}) if signer else {}
    unpublished = sum(1 for run in list_runs(root) if published.get(run.name) != run_stamp(run))
    return {
        "remote": remote, "own_key": signer.fingerprint if signer else None,
        "own_key_trusted": bool(signer and signer.fingerprint in view.keys.keys),
        "team_keys": len(view.keys.keys), "team_key_problems": view.keys.problems,
        "last_sync": load_json(last_sync_path(root), None), "unpublished_runs": unpublished,
        "authors": authors, "reviews_counted": len(view.reviews), "runs_counted": len(view.runs),
        "rejected": [r.to_json() for r in view.rejected],
        "rejected_by_cause": rejected_by_cause(view.rejected),
        "ignored_refs": sorted(set(view.ignored_refs) | {AUTHORS + a for a in theirs if not FINGERPRINT.match(a)}),
    }
