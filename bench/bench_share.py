"""`vacant sync` and `vacant reputation` on a team's worth of shared records, against `git fetch`.

    python bench/bench_share.py [--authors 20] [--runs 10000] [--reviews 50000] [--reps 5] [--json F] [--fresh]

Setup (not timed): --authors Ed25519 keys (fixed seeds), --runs run records and --reviews review
records spread evenly over them, each author's on their own ref (10 commits each, as if synced
ten times), pushed to a bare repository whose `main` commits the team-keys file. Generating it
takes minutes (60,000 signatures, 60,000 git objects), so the bare repository is kept in the
temporary directory per set of arguments and copied for each run (`--fresh` makes it again).

Timed, each repetition in a fresh `git clone` of that remote (the clone itself is not timed):
- reference: `git fetch` of the same refs (`+refs/vacant/authors/*`) into a fresh clone;
- sync cold: `vacant sync` in a fresh clone (fetch, 20 fast-forwards, nothing to push), with the
  fetch, merge and push phases timed separately (merge = the rest);
- sync warm: `vacant sync` again, nothing new anywhere;
- sync busy: another machine of one author pushed 100 new reviews, and this clone holds 100 other
  new reviews of the same author on a diverged history: fetch, a union merge, push;
- sync cold ends by verifying what it fetched into the sealed team cache (`sync cold verify`);
- reputation first: `vacant reputation --json` as a whole process in that fresh clone right after
  its first sync (what a person sees; target <= 1.5x git fetch);
- reputation warm: again, nothing changed (target <= 0.2x git fetch): the sealed text of the first
  (vacant/share/warm.py);
- reputation after busy: after the busy sync (one author's ref moved);
- reputation rebuild: every share cache of the clone and the warm texts deleted first, so the team's
  records are verified again from the refs (what a clone whose refs moved without `vacant sync` pays
  once: a ref its manifests index whole is counted from its indexes, docs/SHARE.md; target <= 1.5x);
- `--local` (no team records, computed: its first call) and `vacant --version` (the interpreter
  alone) as references.
Printed: median and p95 per figure, and the ratio to the `git fetch` median of the same run.
This script prints figures; it never asserts a time.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from vacant.core.locations import state_dir
from vacant.share import sync as share_sync
from vacant.share.gitstore import GitStore
from vacant.share.gitstore import AUTHORS
from vacant.share.publish import add_entries, entry_path, seal
from vacant.share.records import (
    Cell,
    Hunk,
    LineEdit,
    PathLines,
    ReadCoverage,
    ReviewRecord,
    RunRecord,
    StepEntry,
)
from vacant.share.signing import Signer

BIN = Path(sys.executable).parent
GIT_ENV = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b",
           "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def signer(seed: int) -> Signer:
    key = Ed25519PrivateKey.from_private_bytes(seed.to_bytes(32, "big"))
    return Signer(key, key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw))


def records_of(author: int, runs: int, reviews: int, tag: str = "") -> list[tuple[str, object]]:
    cells = [Cell("claude-code", "main", f"model-{m}", f"family-{author % 4}") for m in range(3)]
    out: list[tuple[str, object]] = []
    for n in range(runs):
        run = f"run-{tag}{author}-{n}"
        steps = [StepEntry(s, "Edit", s % 2, "ok", [f"src/mod{s}.py"]) for s in range(1, 6)]
        # line data as a run from a clean checkout has it: each baseline named by its committed
        # blob, one small edit script per step (vacant/share/lines.py)
        lines = [PathLines(f"src/mod{s}.py", None, f"{author:08x}{n:016x}{s:016x}",
                           [LineEdit(s, [], [Hunk(10 * s, 10 * s + 1, [f"{n:08x}{s:04x}{k:04x}" for k in range(3)])])],
                           None) for s in range(1, 6)]
        out.append(("run", RunRecord(run, "claude-code", "a" * 40, 1.8e9 + n, 40, cells[:2], steps, 12,
                                     ReadCoverage("partial", "1 shell step"), [], "b" * 40, lines)))
    for n in range(reviews):
        out.append(("review", ReviewRecord(f"run-{tag}{author}-{n % max(runs, 1)}", 100 + n, cells[n % 3],
                                           float(n % 5 != 0), 1.0, None if n % 5 else f"f{n}")))
    return out


def publish_synthetic(store: GitStore, who: Signer, items: list[tuple[str, object]], commits: int) -> None:
    chunk = math.ceil(len(items) / commits)
    for start in range(0, len(items), chunk):
        blobs = {}
        for kind, record in items[start:start + chunk]:
            blob = seal(who, kind, record)
            blobs[entry_path(kind, blob)] = blob
        add_entries(store, who, blobs, "bench")


def setup(base: Path, authors: int, runs: int, reviews: int) -> tuple[Path, list[Signer]]:
    bare, source = base / "remote.git", base / "source"
    git(base, "init", "-q", "--bare", str(bare))
    git(base, "clone", "-q", str(bare), str(source))
    people = [signer(1000 + n) for n in range(authors)]
    (source / ".vacant-team-keys").write_text("".join(p.team_line(f"author{n}") + "\n" for n, p in enumerate(people)))
    git(source, "add", "-A")
    git(source, "commit", "-qm", "team keys")
    git(source, "push", "-q", "origin", "HEAD:refs/heads/main")
    git(bare, "symbolic-ref", "HEAD", "refs/heads/main")
    store = GitStore(source)
    for n, person in enumerate(people):
        share = (runs // authors + (n < runs % authors), reviews // authors + (n < reviews % authors))
        publish_synthetic(store, person, records_of(n, *share), commits=10)
    git(source, "push", "-q", "origin", f"{AUTHORS}*:{AUTHORS}*")
    return bare, people


def fresh_clone(base: Path, bare: Path, name: str) -> Path:
    path = base / name
    shutil.rmtree(path, ignore_errors=True)
    git(base, "clone", "-q", str(bare), str(path))
    return path


def cached_remote(base: Path, args: argparse.Namespace) -> tuple[Path, list[Signer], float]:
    """The generated bare repository for these arguments, copied into `base` (made first when
    missing or with --fresh); and how long making it took (0 when it was kept)."""
    kept = Path(tempfile.gettempdir()) / f"vacant-bench-share-{args.authors}-{args.runs}-{args.reviews}-v3"
    spent = 0.0
    if args.fresh or not (kept / "done").exists():
        shutil.rmtree(kept, ignore_errors=True)
        kept.mkdir(parents=True)
        t0 = time.perf_counter()
        bare, _ = setup(kept, args.authors, args.runs, args.reviews)
        spent = time.perf_counter() - t0
        shutil.rmtree(kept / "source")
        (kept / "done").write_text("ok\n")
    shutil.copytree(kept / "remote.git", base / "remote.git", symlinks=True)
    return base / "remote.git", [signer(1000 + n) for n in range(args.authors)], spent


class Phases:
    """Times GitStore.fetch, GitStore.push and the closing verification inside one sync (the rest
    is publish + merge)."""

    def __init__(self) -> None:
        self.fetch = self.push = self.verify = 0.0
        self.real_fetch, self.real_push = GitStore.fetch, GitStore.push
        self.real_verify = share_sync.team_summary

    def __enter__(self) -> Phases:
        phases = self

        def fetch(store, *args):
            t0 = time.perf_counter()
            try:
                return phases.real_fetch(store, *args)
            finally:
                phases.fetch += time.perf_counter() - t0

        def push(store, *args):
            t0 = time.perf_counter()
            try:
                return phases.real_push(store, *args)
            finally:
                phases.push += time.perf_counter() - t0

        def verify(*args):
            t0 = time.perf_counter()
            try:
                return phases.real_verify(*args)
            finally:
                phases.verify += time.perf_counter() - t0

        GitStore.fetch, GitStore.push, share_sync.team_summary = fetch, push, verify
        return self

    def __exit__(self, *exc) -> None:
        GitStore.fetch, GitStore.push, share_sync.team_summary = self.real_fetch, self.real_push, self.real_verify


def timed_sync(ws: Path, me: Signer) -> dict[str, float]:
    with Phases() as phases:
        t0 = time.perf_counter()
        share_sync.sync(ws, "origin", signer=me)
        total = time.perf_counter() - t0
    return {"total": total, "fetch": phases.fetch, "push": phases.push, "verify": phases.verify,
            "merge": total - phases.fetch - phases.push - phases.verify}


def timed_process(ws: Path, *args: str) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run([str(BIN / "vacant"), *args], cwd=ws, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"vacant {args} failed: {proc.stderr}")
    return elapsed


def one_rep(base: Path, bare: Path, people: list[Signer], rep: int, me: Signer, reviews: int) -> dict[str, float]:
    figures: dict[str, float] = {}
    ref_ws = fresh_clone(base, bare, "ref")
    t0 = time.perf_counter()
    git(ref_ws, "fetch", "-q", "--no-tags", "origin", f"+{AUTHORS}*:refs/vacant/remotes/origin/authors/*")
    figures["git fetch"] = time.perf_counter() - t0
    ws = fresh_clone(base, bare, "ws")
    for phase, value in timed_sync(ws, me).items():
        figures[f"sync cold {phase}"] = value
    figures["reputation first"] = timed_process(ws, "reputation", "--json")
    figures["reputation warm"] = timed_process(ws, "reputation", "--json")
    figures["sync warm total"] = timed_sync(ws, me)["total"]
    other = fresh_clone(base, bare, "other")  # another machine of author 0 pushes 100 reviews
    share_sync.sync(other, "origin", signer=people[0])
    publish_synthetic(GitStore(other), people[0], records_of(0, 0, 100, tag=f"o{rep}-"), commits=1)
    share_sync.sync(other, "origin", signer=people[0])
    publish_synthetic(GitStore(ws), people[0], records_of(0, 0, 100, tag=f"w{rep}-"), commits=1)  # diverged
    for phase, value in timed_sync(ws, me).items():
        figures[f"sync busy {phase}"] = value
    figures["reputation after busy"] = timed_process(ws, "reputation", "--json")
    share = state_dir(ws) / "share"
    shutil.rmtree(share / "team", ignore_errors=True)
    shutil.rmtree(share / "authors", ignore_errors=True)
    shutil.rmtree(share / "verified", ignore_errors=True)
    shutil.rmtree(Path(os.environ["VACANT_HOME"]) / "warm")  # the warm texts too: else one answers unchanged refs
    figures["reputation rebuild"] = timed_process(ws, "reputation", "--json")
    figures["reputation --local"] = timed_process(ws, "reputation", "--json", "--local")
    figures["vacant --version"] = timed_process(ws, "--version")
    counted = json.loads(subprocess.run([str(BIN / "vacant"), "reputation", "--json"], cwd=ws, capture_output=True,
                                        text=True).stdout)["provenance"]
    if counted["rejected"] or counted["team"] < reviews:
        raise SystemExit(f"bench setup is wrong: {counted}")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--authors", type=int, default=20)
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--reviews", type=int, default=50_000)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--fresh", action="store_true", help="generate the remote again, even if one is kept")
    args = parser.parse_args()
    os.environ.update(GIT_ENV)
    base = Path(tempfile.mkdtemp(prefix="vacant-bench-share-"))
    os.environ.update({"HOME": str(base / "home"), "XDG_CONFIG_HOME": str(base / "home" / ".config"),
                       "VACANT_HOME": str(base / "data")})
    try:
        bare, people, spent = cached_remote(base, args)
        made = f"made in {spent:.1f} s" if spent else "kept from an earlier run (--fresh makes it again)"
        print(f"setup: {args.authors} authors, {args.runs} run records, {args.reviews} reviews, {made}; "
              f"remote {sum(f.stat().st_size for f in bare.rglob('*') if f.is_file()) / 1e6:.1f} MB")
        from vacant.core.keys import create_user_key

        create_user_key()  # the person's own key, as `vacant init` makes it: the caches are sealed with it
        me = signer(7)  # this clone's own key: not a team key, nothing of its own to publish
        rows: dict[str, list[float]] = {}
        for rep in range(args.reps):
            for name, value in one_rep(base, bare, people, rep, me, args.reviews).items():
                rows.setdefault(name, []).append(value)
        reference = statistics.median(rows["git fetch"])
        print(f"{'figure':<22} {'median s':>9} {'p95 s':>9} {'x git fetch':>12}   (reps={args.reps})")
        for name, values in rows.items():
            median = statistics.median(values)
            print(f"{name:<22} {median:>9.3f} {p95(values):>9.3f} {median / reference:>12.2f}")
        # the first reputation of a clone: after `vacant sync` (which verified), or with refs a plain
        # git fetch brought (the rebuild verifies them); and the sync's own verification
        for name, target in (("reputation first", 1.5), ("reputation rebuild", 1.5), ("sync cold verify", 1.5),
                             ("reputation warm", 0.2)):
            ratio = statistics.median(rows[name]) / reference
            print(f"target: {name} <= {target}x git fetch: {ratio:.2f}x ({'met' if ratio <= target else 'NOT met'})")
        if args.json:
            args.json.write_text(json.dumps({"args": vars(args) | {"json": str(args.json)}, "figures": rows}, indent=1))
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
