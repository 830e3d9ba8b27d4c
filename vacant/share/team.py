"""Reading the team's records: every author ref, each record verified, the union deduplicated.

Contract:
- A record counts only if its name is the sha256 of its bytes, its bytes are the canonical
  documented shape, it sits under its own author's ref, its author is a trusted key (committed
  `.vacant-team-keys` at HEAD), and its Ed25519 signature verifies. Anything else is a `Rejected`
  with its reason, kept out of every figure.
- The same review counts once (by what it says: `review_key`), whoever published it and however
  many refs hold it.
  For a run, the record covering the most of its step log (`through_seq`) is the one shown.
- Refs under `refs/vacant/authors/` whose name is not a fingerprint are listed, never read.
- Three caches spare re-checking signatures on every read, all sealed (vacant/share/cache.py:
  an HMAC under the person's own key over what the cache was built from and its bytes, so an
  edited, truncated or foreign file is rebuilt, never believed): the whole view
  (`.git/vacant/share/team/view-*.json`: the snapshots below it was counted from, embedded as
  they were sealed, and counted again on reading), keyed by every author ref's commit and the team keys'
  blob ids at HEAD, so any change of a ref or of trust rebuilds it; per author ref, what its
  commit held (`.git/vacant/share/authors/`), keyed by the commit and the author's trust; and
  verified blobs by git object id, per author ref (`.git/vacant/share/verified/`, so a ref that
  moved loads only its own author's verdicts). A cache holds only the
  verdicts of records verified when it was built. Deleting any of them costs time only.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import queue
import re
import threading
from collections.abc import Iterable, Iterator
from itertools import filterfalse, repeat
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from vacant.core.locations import state_dir
from vacant.share.cache import encode, load_sealed, load_sealed_bytes, save_sealed, save_sealed_bytes
from vacant.share.gitstore import AUTHORS, GitStore
from vacant.share import index
from vacant.share.records import (
    ENTRY,
    MAX_INDEXED_PATHS,
    RecordError,
    RunRecord,
    body_id_of,
    cut_body,
    parse_blob,
    signed_bytes_cut,
)
from vacant.share.quickindex import read_index
from vacant.share.quickread import quick_read, run_paths
from vacant.share.signing import TeamKey, TeamKeys, parse_team_keys
from vacant.share.teamkey import TEAM_KEY_SUFFIX, TEAM_KEYS_FILE, view_key, view_path

FINGERPRINT = re.compile(r"^[0-9a-f]{32}$")
DIR_KINDS = {"runs": "run", "reviews": "review", "manifests": "manifest"}
MISNAMED = "content does not match its name (edited after it was written)"


@dataclass(frozen=True)
class Rejected:
    ref: str
    path: str
    oid: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return asdict(self)


class Counted(NamedTuple):  # a tuple, not a dataclass: a team's view holds tens of thousands
    """A verified record: its name (the sha256 of its bytes), who signed it, its git blob id and
    what it says (a review's body, a run's summary)."""
    id: str
    author: str
    oid: str
    body: dict[str, Any]


@dataclass
class TeamView:
    keys: TeamKeys
    reviews: dict[tuple[Any, ...], Counted] = field(default_factory=dict)  # by what the review says (`review_key`)
    runs: dict[str, Counted] = field(default_factory=dict)
    rejected: list[Rejected] = field(default_factory=list)
    ignored_refs: list[str] = field(default_factory=list)
    per_author: dict[str, int] = field(default_factory=dict)  # reviews counted, by signer
    sealed: bytes | None = field(default=None, repr=False, compare=False)  # a built view's cache payload


def team_keys(store: GitStore) -> TeamKeys:
    """The keys committed at HEAD: each `.vacant-team-keys/<name>.pub` (one file per person, so two
    people adding theirs never conflict), or the older single `.vacant-team-keys` file."""
    data = store.file_at_head(TEAM_KEYS_FILE)
    if data is not None:
        return parse_team_keys(data.decode(errors="replace"))
    keys = TeamKeys({}, [])
    for path in store.files_at_head(TEAM_KEYS_FILE):
        if not path.endswith(TEAM_KEY_SUFFIX):
            continue  # a README beside the keys, say
        blob = store.file_at_head(path)
        one = parse_team_keys(blob.decode(errors="replace") if blob is not None else "", source=path)
        keys.keys.update(one.keys)
        keys.problems += one.problems
    return keys


def cache_path(root: Path, author: str) -> Path:
    """The verdicts of the blobs found under one author's ref, by object id."""
    return state_dir(root) / "share" / "verified" / f"{author}.json"


def author_refs(refs: dict[str, str], view: TeamView, prefix: str = AUTHORS) -> dict[str, str]:
    """Fingerprint -> commit for every well-named author ref; the others go to `ignored_refs`."""
    found = {}
    for ref, oid in sorted(refs.items()):
        name = ref[len(prefix):]
        if FINGERPRINT.match(name):
            found[name] = oid
        else:
            view.ignored_refs.append(ref)
    return found


def read_team(root: Path, store: GitStore, kinds: tuple[str, ...] = ("run", "review"),
              prefix: str = AUTHORS) -> TeamView:
    """The team's verified records: from the sealed view cache when it was built from exactly the
    refs and team keys there are now, else read and verified again (and cached)."""
    return read_team_keyed(root, store, kinds, prefix)[0]


def read_team_keyed(root: Path, store: GitStore, kinds: tuple[str, ...] = ("run", "review"),
                    prefix: str = AUTHORS, keep: bool = True,
                    keyed: tuple[str, dict[str, str]] | None = None) -> tuple[TeamView, str]:
    """`read_team`, and the key of what the view was built from (for caches derived from it).
    `keep`: seal a view that was built. A caller that keeps only what it derives from the view, as
    the reputation figures do, spares writing it, and a review its author's indexes name is held as
    what it says (the key of `view.reviews`) without its record (an empty `Counted.body`), and a
    run they name is not held at all (the figures count reviews). `keyed`: `view_key` as the
    caller just read it (the view is then built from exactly those refs)."""
    key, refs = keyed or view_key(store, kinds, prefix)
    path = view_path(root, kinds, prefix)
    cached = view_from_json(load_sealed(path, key), prefix)
    if cached is not None:
        return cached, key
    view = build_view(root, store, refs, kinds, prefix, keep)
    if keep and view.sealed is not None:
        save_sealed_bytes(path, key, view.sealed)
    return view, key


def build_view(root: Path, store: GitStore, refs: dict[str, str], kinds: tuple[str, ...] = ("run", "review"),
               prefix: str = AUTHORS, keep: bool = True) -> TeamView:
    """Every author ref of `refs` read and each record verified (per-author snapshots and the
    verified-blob cache spare the unchanged ones)."""
    with _no_collection():
        return _build_view(root, store, refs, kinds, prefix, keep)


@contextlib.contextmanager
def _no_collection() -> Iterator[None]:
    """The cyclic garbage collector held off: a build makes hundreds of thousands of small objects
    that all stay alive (verdicts, bodies), each of which would make it walk everything again;
    they hold no cycle, and it runs as before once the build is done."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.freeze()  # what the build made outlives it: moved out of the collector's walks (refcounts still free it)
            gc.enable()


def _build_view(root: Path, store: GitStore, refs: dict[str, str], kinds: tuple[str, ...], prefix: str,
                keep: bool) -> TeamView:
    view = TeamView(team_keys(store))
    authors = author_refs(refs, view, prefix)
    snapshots: dict[str, tuple[dict[str, Any], bytes]] = {}
    for author, commit in authors.items():
        payload = load_sealed_bytes(*_snapshot_place(root, view, author, commit, kinds))
        snap = _snapshot(payload)
        if snap is not None and payload is not None:
            snapshots[author] = (snap, payload)
    todo = [author for author in authors if author not in snapshots]
    found = index.tops(store, [authors[author] for author in todo])
    # every author's manifests at once, each checked as git writes it, their signatures on a second thread
    checked = check_manifests(view.keys, store.stream_blobs(sorted({
        oid for author in todo if (top := found[authors[author]]) is not None for _, oid in top.manifests})))
    embedded = []
    for author, commit in authors.items():
        if author in snapshots:  # only a ref that was listed has one
            snap, payload = snapshots[author]
        else:
            cache = _OidCache(cache_path(root, author))
            snap, listed = _read_author(store, view.keys, cache, author, commit, kinds, found[commit], checked,
                                        light=not keep)
            payload = encode(snap) if keep or listed else b""
            if listed:  # a ref its manifests index whole is read again as quickly as its snapshot would be
                save_sealed_bytes(*_snapshot_place(root, view, author, commit, kinds), payload)
                cache.save()
        _apply_snapshot(view, author, snap, prefix)
        embedded.append(b"[" + encode(author) + b"," + payload + b"]")
    # the view's own cache embeds the snapshots' sealed bytes as they are (`view_from_json`):
    # encoding every record a third time cost more than all the rest of writing the caches
    view.sealed = None if not keep else (
        b'{"ignored_refs":' + encode(view.ignored_refs) + b',"keys":'
        + encode({fp: key.name for fp, key in view.keys.keys.items()}) + b',"problems":'
        + encode(view.keys.problems) + b',"snapshots":[' + b",".join(embedded) + b"]}")
    return view


def _snapshot_place(root: Path, view: TeamView, author: str, commit: str, kinds: tuple[str, ...]) -> tuple[Path, str]:
    """Where one author ref's snapshot is cached, and the key it is sealed under."""
    trusted = author in view.keys.keys
    return (snapshot_dir(root) / f"{author}.{'-'.join(sorted(kinds))}.json",
            json.dumps([author, commit, trusted, sorted(kinds)]))


def _snapshot(payload: bytes | None) -> dict[str, Any] | None:
    try:
        snap = json.loads(payload) if payload is not None else None
    except ValueError:
        return None
    return snap if isinstance(snap, dict) and isinstance(snap.get("counted"), list) else None


def _apply_snapshot(view: TeamView, author: str, snap: dict[str, Any], prefix: str) -> None:
    """Count one author ref's snapshot into the view (building it, or reading its cache); a review
    as `_count` counts it, inline (it runs once a team review)."""
    reviews = view.reviews
    held = len(reviews)
    # a review counted from an index by what it says (a light view): the new ones in the order
    # met, without a Python step per review (a team holds tens of thousands); the filter is lazy,
    # so a key met twice is found the second time among those just added
    reviews.update(zip(filterfalse(reviews.__contains__, snap.get("keys", ())), repeat(Counted("", author, "", {}))))
    added = len(reviews) - held
    for kind, record_id, oid, body in snap["counted"]:
        if kind != "review":
            _count(view, Counted(record_id, author, oid, body), kind)
            continue
        cell = body["cell"]
        key = (body["run"], body["seq"], (cell["platform"], cell["agent_definition"], cell["model"],
               cell["task_family"]), body["score"], body["weight"], body["finding"])  # review_key
        if key not in reviews:
            reviews[key] = Counted(record_id, author, oid, body)
            added += 1
    if added:
        view.per_author[author] = view.per_author.get(author, 0) + added
    view.rejected += [Rejected(prefix + author, path, oid, reason) for path, oid, reason in snap["rejected"]]


def view_to_json(view: TeamView) -> dict[str, Any]:
    """A view as plain JSON, whole (what a reader compares; the cache holds the snapshots instead)."""
    def counted(items: dict[Any, Counted]) -> list[list[Any]]:
        return [[c.id, c.author, c.oid, c.body] for c in items.values()]

    return {"keys": {fp: key.name for fp, key in view.keys.keys.items()}, "problems": view.keys.problems,
            "reviews": counted(view.reviews), "runs": counted(view.runs),
            "rejected": [[r.ref, r.path, r.oid, r.reason] for r in view.rejected],
            "ignored_refs": view.ignored_refs, "per_author": view.per_author}


def view_from_json(data: Any, prefix: str = AUTHORS) -> TeamView | None:
    """A view from its cache (`TeamView.sealed`: the team keys' names, the ignored refs and each
    author ref's snapshot, counted again as a build counts them); its team keys carry names only,
    so nothing is verified from a cached view. None when it is not that shape."""
    try:
        keys = TeamKeys({fp: TeamKey(fp, None, str(name)) for fp, name in data["keys"].items()},
                        [str(p) for p in data["problems"]])
        view = TeamView(keys, ignored_refs=[str(r) for r in data["ignored_refs"]])
        for author, snap in data["snapshots"]:
            _apply_snapshot(view, str(author), snap, prefix)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError):
        return None
    return view


def snapshot_dir(root: Path) -> Path:
    """One file per author ref and kinds read: what its commit held, verified (valid while the
    ref names the same commit and the author's trust is unchanged)."""
    return state_dir(root) / "share" / "authors"


_OID_CACHE_KEY = "verified blobs by object id, format 2"


class _OidCache:
    """Verified blobs by git object id, loaded only when some author ref has to be read again."""

    def __init__(self, path: Path) -> None:
        self.path, self.size = path, 0
        self.entries: dict[str, list[Any]] | None = None

    def get(self) -> dict[str, list[Any]]:
        if self.entries is None:
            found = load_sealed(self.path, _OID_CACHE_KEY)
            self.entries = found if isinstance(found, dict) else {}
            self.size = len(self.entries)
        return self.entries if self.entries is not None else {}

    def save(self) -> None:
        if self.entries is not None and len(self.entries) != self.size:
            save_sealed(self.path, _OID_CACHE_KEY, self.entries)


def _read_author(store: GitStore, keys: TeamKeys, oid_cache: _OidCache, author: str, commit: str,
                 kinds: tuple[str, ...], top: index.Top | None = None, checked: dict[str, Checked] | None = None,
                 light: bool = False) -> tuple[dict[str, list[Any]], bool]:
    """Every entry of one author's commit: counted [kind, id, oid, body] or rejected [path, oid, reason];
    and whether the ref had to be listed. Its valid manifests are read first: when one's claim is
    the whole ref, their indexes are counted and no record is read (vacant/share/index.py); else a
    record an index names with its exact blob is counted from it, one a manifest lists needs no
    signature check of its own, and any other is verified alone. `light`: the reviews of a ref read
    from its indexes are given as what each says (`keys`), not as records, and its runs not at all. `checked`: manifests'
    verdicts already known (`check_manifests`)."""
    checked = dict(checked or {})
    if top is not None:
        rejected: list[Any] = []
        valid = valid_manifests(keys, author, top.manifests, {}, rejected, checked)
        said: list[tuple[Any, ...]] | None = [] if light and "review" in kinds else None
        rows = index.whole_ref(top, valid, said)
        if rows is not None:
            found = {"counted": _counted(rows, kinds), "rejected": rejected}
            return ({**found, "keys": said} if said is not None else found), False
    rejected = []
    manifests, placed = [], []
    for entry in store.list_tree(commit):
        match = ENTRY.match(entry.path)
        if not match or entry.mode != "100644" or entry.type != "blob":
            rejected.append([entry.path, entry.oid, "unexpected entry: not runs|reviews|manifests/<2 hex>/<62 hex>"])
        elif match.group(1) == "manifests":
            manifests.append((entry.path, entry.oid))
        elif DIR_KINDS[match.group(1)] in kinds:
            placed.append((entry.path, entry.oid))
    checked.update(check_manifests(keys, store.stream_blobs(sorted({oid for _, oid in manifests if oid not in checked}))))
    valid = valid_manifests(keys, author, manifests, {}, rejected, checked)
    vouched: set[str] = set()
    covered: dict[tuple[str, str], index.Row] = {}
    for body in valid.values():
        vouched.update(body["records"])
        for indexed in index.indexed(body) or ():
            covered[(indexed.name, indexed.oid)] = indexed
            vouched.add(indexed.name)
    cache = oid_cache.get()
    blobs = store.read_blobs(sorted({oid for path, oid in placed if oid not in cache
                                     and (path.replace("/", "")[-64:], oid) not in covered}))
    counted = []
    for path, oid in placed:
        row = covered.get((path.replace("/", "")[-64:], oid))
        if row is not None and DIR_KINDS[path.split("/", 1)[0]] == row.kind:
            counted += _counted([row], kinds)
        else:
            counted += _verify(keys, cache, blobs, author, [(path, oid)], vouched, rejected)
    return {"counted": counted, "rejected": rejected}, True


def valid_manifests(keys: TeamKeys, author: str, entries: list[tuple[str, str]], blobs: dict[str, bytes],
                    rejected: list[Any], checked: dict[str, Checked] | None = None) -> dict[str, dict[str, Any]]:
    """The manifests among `entries` that verify as the author's (name -> body); the others rejected.
    `checked`: their verdicts (`check_manifests`), else checked here from `blobs`. Their verdicts
    are not cached by blob id: an index is as large as the records it names."""
    if checked is None:
        checked = check_manifests(keys, ((oid, blobs[oid]) for oid in {oid for _, oid in entries} if oid in blobs))
    valid = {}
    for path, oid in entries:
        name = path.replace("/", "")[-64:]
        sha, verdict = checked.get(oid, (None, "object missing from the repository"))
        if sha is not None and sha != name:
            verdict = MISNAMED
        reason = verdict if isinstance(verdict, str) else placement(keys, verdict, author, path)
        if reason or not isinstance(verdict, list):
            rejected.append([path, oid, reason or "unreadable"])
        else:
            valid[name] = verdict[4]
    return valid


Checked = tuple[str, list[Any] | str]  # a blob's sha256 and its verdict (`check_blob`)


def check_manifests(keys: TeamKeys, blobs: Iterable[tuple[str, bytes]]) -> dict[str, Checked]:
    """`check_blob` of each (object id, bytes), with its sha256: what `valid_manifests` decides from.
    Each blob's sha256 and signature are checked on a second thread while the next blob is read
    and parsed (both let go of the interpreter's lock; a team's manifests are megabytes); a verdict
    is returned only once its signature was checked, and one that fails says so as `check_blob`
    would."""
    found: dict[str, list[Any] | str] = {}
    with _Signatures(keys) as signatures:
        for oid, data in blobs:
            signatures.digest(oid, data)
            found[oid] = check_blob(keys, data, {}, oid, None, _DIGESTED_LATER, signatures)
    checked: dict[str, Checked] = {}
    for oid, verdict in found.items():
        sha = signatures.digests[oid]
        if oid in signatures.failed:
            verdict = _BAD_SIGNATURE.format(author=verdict[1])
        elif isinstance(verdict, list):
            verdict[0] = sha
        checked[oid] = (sha, verdict)
    return checked


_BAD_SIGNATURE = "bad signature: edited after signing, or not signed by {author}"
_DIGESTED_LATER = ""  # a verdict's sha256 that `check_manifests` fills in from its thread


class _Signatures:
    """Work run on a worker thread, in order, that lets go of the interpreter's lock for most of
    its time: blobs' sha256 (`digest`) and Ed25519 checks of their signed bytes (`check`).
    `digests` and `failed` (the ids whose signature did not verify) are complete once the `with`
    block is left, which waits for all of it and raises what a check raised."""

    def __init__(self, keys: TeamKeys) -> None:
        self.keys = keys
        self.digests: dict[str, str] = {}
        self.failed: set[str] = set()
        self.todo: queue.SimpleQueue[tuple[Any, ...] | None] = queue.SimpleQueue()
        self.error: BaseException | None = None
        self.worker = threading.Thread(target=self._run, name="vacant-signatures", daemon=True)

    def __enter__(self) -> _Signatures:
        self.worker.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.todo.put(None)
        self.worker.join()
        if self.error is not None and exc[0] is None:
            raise self.error

    def digest(self, oid: str, data: bytes) -> None:
        self.todo.put((oid, data))

    def check(self, oid: str, author: str, kind: str, version: int, body: bytes, sig: str) -> None:
        """Verify `sig` over `signed_bytes_cut` of these (made on the thread: megabytes to copy)."""
        self.todo.put((oid, author, kind, version, body, sig))

    def _run(self) -> None:
        while (job := self.todo.get()) is not None:
            if len(job) == 2:
                self.digests[job[0]] = hashlib.sha256(job[1]).hexdigest()
                continue
            oid, author, kind, version, body, sig = job
            try:
                if not self.keys.verify(author, signed_bytes_cut(author, kind, version, body), sig):
                    self.failed.add(oid)
            except BaseException as error:  # noqa: BLE001 - raised again on the caller's thread
                self.failed.add(oid)
                self.error = self.error or error


def _counted(rows: list[index.Row], kinds: tuple[str, ...]) -> list[Any]:
    """Index rows as `_verify` counts records: (kind, name, oid, summary), as a row is."""
    return rows if all(kind in kinds for kind in ("run", "review")) else [row for row in rows if row.kind in kinds]


def _verify(keys: TeamKeys, cache: dict[str, list[Any]], blobs: dict[str, bytes], author: str,
            placed: list[tuple[str, str]], vouched: set[str], rejected: list[Any]) -> list[Any]:
    counted = []
    for tree_path, oid in placed:
        verdict: list[Any] | str | None = cache.get(oid)
        if verdict is None:
            data = blobs.get(oid)
            name = tree_path.replace("/", "")[-64:]
            sha = hashlib.sha256(data).hexdigest() if data is not None else None
            named = data is None or sha == name
            verdict = check_blob(keys, data, cache, oid, author if name in vouched else None, sha) if named else MISNAMED
        reason = verdict if isinstance(verdict, str) else placement(keys, verdict, author, tree_path)
        if reason or not isinstance(verdict, list):
            rejected.append([tree_path, oid, reason or "unreadable"])
        else:
            counted.append([verdict[2], verdict[0], oid, verdict[4]])
    return counted


def check_blob(keys: TeamKeys, data: bytes | None, cache: dict[str, list[Any]], oid: str,
               vouched_by: str | None = None, sha: str | None = None,
               signatures: _Signatures | None = None) -> list[Any] | str:
    """Verify one blob's shape and signature; cache the verdict when it does not depend on trust.
    `vouched_by`: a valid manifest of that author lists these exact bytes, which stands in for the
    record's own signature only when the record names the same author. `sha`: the blob's sha256, if known
    (`check_manifests` gives "" and fills it in from its thread).
    `signatures`: the signature is handed to it rather than checked here (`check_manifests` alone
    passes one, and gives no verdict before it was checked); nothing is cached then."""
    if data is None:
        return "object missing from the repository"
    try:  # a verdict given to `check_manifests` is never cached, so an index's ids may stay undecoded
        author, kind, version, sig, body_bytes, summary = shape_of(data, undecoded=signatures is not None)
    except RecordError as error:
        return f"malformed: {error}"
    if author not in keys.keys:
        return f"unknown key {author} (not in {TEAM_KEYS_FILE} at HEAD)"
    if vouched_by != author:
        if signatures is not None:
            signatures.check(oid, author, kind, version, body_bytes, sig)
        elif not keys.verify(author, signed_bytes_cut(author, kind, version, body_bytes), sig):
            return _BAD_SIGNATURE.format(author=author)
    # a manifest is never counted, so it needs no body id (an index's bytes are megabytes)
    verdict = [sha if sha is not None else hashlib.sha256(data).hexdigest(), author, kind,
               body_id_of(kind, body_bytes) if kind != "manifest" else "", summary]
    if signatures is None:
        cache[oid] = verdict
    return verdict


def shape_of(data: bytes, undecoded: bool = False) -> tuple[str, str, int, str, bytes, Any]:
    """A blob `parse_blob` accepts, as the verdict needs it: author, kind, format, signature, the
    body's canonical bytes and what the view keeps of the body; the quick readers' answer when
    they have one (the same, by their contracts: vacant/share/quickread.py, quickindex.py), else
    `parse_blob`'s. `undecoded`: a manifest's id lists may be left as `quickindex.HexColumn`s
    (not JSON: for a verdict that is never cached)."""
    quick = quick_read(data)
    if quick is not None:
        if quick.kind == "run":
            values = quick.values
            summary = {"run": values["run"], "through_seq": values["through_seq"], "lines": quick.text("lines") not in (b"", b"[]"),
                       "paths": _capped(run_paths(quick))}
        else:
            summary = quick.raw()
        return quick.author, quick.kind, quick.v, quick.sig, quick.body, summary
    index = read_index(data)
    if index is not None:
        return index.author, index.kind, index.v, index.sig, index.body, index.values if undecoded else index.raw()
    envelope, body = parse_blob(data)
    summary = ({"run": body.run, "through_seq": body.through_seq, "lines": bool(body.lines), "paths": _paths(body)}
               if envelope.kind == "run" else envelope.body)
    return envelope.author, envelope.kind, envelope.v, envelope.sig, cut_body(envelope, data), summary


def placement(keys: TeamKeys, verdict: list[Any], author: str, tree_path: str) -> str | None:
    sha, signer, kind = verdict[0], verdict[1], verdict[2]
    directory, fan, rest = tree_path.split("/")
    if fan + rest != sha:
        return MISNAMED
    if DIR_KINDS[directory] != kind:
        return f"a {kind} record under {directory}/"
    if signer != author:
        return f"signed by {signer}, found under another author's ref"
    if signer not in keys.keys:
        return f"unknown key {signer} (not in {TEAM_KEYS_FILE} at HEAD)"
    return None


def review_key(body: dict[str, Any]) -> tuple[Any, ...]:
    """What a review says, whoever signed it: the same review counts once, however many refs hold it.
    (run, seq, its cell's (platform, agent_definition, model, task_family), score, weight, finding):
    the cell one tuple, as an index gives it (`index.indexed`) and the figures group by it."""
    cell = body["cell"]
    return (body["run"], body["seq"], (cell["platform"], cell["agent_definition"], cell["model"], cell["task_family"]),
            body["score"], body["weight"], body["finding"])


def _count(view: TeamView, counted: Counted, kind: str) -> None:
    if kind == "review":
        key = review_key(counted.body)
        if key in view.reviews:
            return
        view.reviews[key] = counted
        view.per_author[counted.author] = view.per_author.get(counted.author, 0) + 1
    else:
        run = counted.body["run"]
        held = view.runs.get(run)
        if held is not None and _rank(held) >= _rank(counted):
            return
        view.runs[run] = counted


def _rank(counted: Counted) -> tuple[int, bool, str]:
    """Which record of a run is shown: the one covering the most of its log, then one with line
    data (a run published again by a newer vacant), then a fixed choice. Verdicts cached before
    format 2 have no `lines` key: they were all format 1, without line data."""
    return counted.body["through_seq"], bool(counted.body.get("lines")), counted.oid




def _paths(body: RunRecord) -> list[str] | None:
    """The path index of a run record: every path it says it changed (steps and line data)."""
    return _capped({path for step in body.steps for path in step.changed} | {item.path for item in body.lines or ()})


def _capped(found: set[str]) -> list[str] | None:
    return sorted(found) if len(found) <= MAX_INDEXED_PATHS else None


def touches(counted: Counted, path: str) -> bool:
    """Whether a verified run record may have changed `path`, by the index its verdict holds (a
    verdict cached before the index, or a run over the cap, is read: never a guess)."""
    paths = counted.body.get("paths")
    return paths is None or path in paths


def run_records(store: GitStore, view: TeamView, path: str | None = None, also: tuple[str, ...] = ()) -> list[RunRecord]:
    """The typed record shown for each run (verified when `view` was read), oldest first: what a
    reader of another machine's runs (who changed which path, from which commit) starts from.
    `path`: only the records whose path index says they changed it (or one of the paths `also`,
    its earlier names) are read."""
    wanted = (path, *also) if path is not None else ()
    chosen = [counted for counted in view.runs.values() if not wanted or any(touches(counted, p) for p in wanted)]
    blobs = store.read_blobs([counted.oid for counted in chosen])
    found = []
    for counted in chosen:
        try:  # counted from a signed index, a record's bytes are its author's word: read, not yet parsed
            found.append(parse_blob(blobs[counted.oid])[1])
        except (KeyError, RecordError):
            continue  # missing (a partial clone) or not a record: nothing to blame with
    return sorted(found, key=lambda record: (record.started, record.run))
