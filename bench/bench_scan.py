"""Scan benchmarks on a generated tree, with `git status --porcelain` as the reference.

    python bench/gen_tree.py bench/out/tree
    python bench/bench_scan.py [--tree bench/out/tree] [--reps 15] [--seed 1] [--json FILE]

Figures (median, p95, min, n; p95 is nearest-rank, so with 15 repetitions it is the slowest):
  (a) first full scan + hash, cold vacant index, warm page cache, with the object store (what a
      run's baseline costs: every blob written) and without it (store=None: pure hashing);
  (b) incremental full scan, nothing changed;
  (c) incremental full scan after 10 files were rewritten (10 new random files each repetition);
  (d) scoped scan of one just-rewritten file (what a Write/Edit hook does);
each in-process (a warm interpreter: open the index, scan) and as a whole process (`python -c`
that imports vacant, opens the index and scans: what a hook pays), next to `git status
--porcelain` on the same tree, measured in the same run, interleaved with (b) and (c).

Every repetition of (a) gets a fresh state directory outside the tree (VACANT_STATE_DIR); (b)-(d)
share one state directory made by a full scan. Files rewritten by (c) and (d) get their original
content back at the end. This script prints figures; it never asserts a time.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
MARKER = Path(".git") / "vacant-bench-tree.json"

# The whole-process variant: what a hook process does, from interpreter start to the scan result.
CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
from pathlib import Path
from vacant.store.states import open_scanner
from vacant.store.hasher import Index, Scanner
from vacant.core.locations import ensure_state_dir
root, mode, paths = Path(sys.argv[1]), sys.argv[2], (sys.argv[3:] or None)
if mode == "nostore":
    state = ensure_state_dir(root)
    scanner = Scanner(root, Index.load(state / "index"), None, state)
else:
    scanner = open_scanner(root)
t1 = time.perf_counter()
result = scanner.scan(paths)
t2 = time.perf_counter()
print(json.dumps({"import_open": t1 - t0, "scan": t2 - t1, "files": result.files, "hashed": result.hashed,
                  "added": len(result.added), "changed": len(result.changed), "removed": len(result.removed)}))
"""


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


class Series:
    def __init__(self, label: str, kind: str) -> None:
        self.label, self.kind, self.values, self.notes = label, kind, [], []

    def add(self, seconds: float) -> None:
        self.values.append(seconds)

    def summary(self) -> dict:
        v = self.values
        return {
            "label": self.label,
            "kind": self.kind,
            "n": len(v),
            "min": min(v) if v else None,
            "median": statistics.median(v) if v else None,
            "p95": p95(v) if v else None,
            "max": max(v) if v else None,
            "notes": sorted(set(self.notes)),
        }


def ratio(value: float | None) -> str:
    return f"{'-':>8}" if value is None else f"{value:8.2f}"


def ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:9.1f}"


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.tree = args.tree.resolve()
        self.rng = random.Random(args.seed)
        self.base = Path(tempfile.mkdtemp(prefix="vacant-bench-state-", dir=args.state_base))
        self.series: dict[str, Series] = {}
        self.originals: dict[str, bytes] = {}
        self.edit_count = 0
        tracked = subprocess.run(
            ["git", "-C", str(self.tree), "ls-files", "-z"], check=True, capture_output=True
        ).stdout.decode().split("\0")
        self.candidates = sorted(
            rel for rel in tracked if rel and not rel.endswith((".bin", ".gitignore"))
        )

    def s(self, key: str, label: str, kind: str) -> Series:
        if key not in self.series:
            self.series[key] = Series(label, kind)
        return self.series[key]

    # -- helpers -------------------------------------------------------------------------------

    def fresh_state(self) -> Path:
        return Path(tempfile.mkdtemp(prefix="state-", dir=self.base))

    def drop_state(self, state: Path) -> None:
        shutil.rmtree(state, ignore_errors=True)
        os.sync()  # start the next repetition without another one's dirty pages in flight

    def in_process(self, state: Path, store: bool, paths: list[str] | None = None):
        os.environ["VACANT_STATE_DIR"] = str(state)
        from vacant.store.hasher import Index, Scanner
        from vacant.store.states import open_scanner

        started = time.perf_counter()
        if store:
            scanner = open_scanner(self.tree)
        else:
            scanner = Scanner(self.tree, Index.load(state / "index"), None, state)
        result = scanner.scan(paths)
        return time.perf_counter() - started, result

    def whole_process(self, state: Path, store: bool, paths: list[str] | None = None) -> tuple[float, dict]:
        env = {**os.environ, "VACANT_STATE_DIR": str(state)}
        argv = [sys.executable, "-c", CHILD, str(self.tree), "store" if store else "nostore", *(paths or [])]
        started = time.perf_counter()
        done = subprocess.run(argv, env=env, capture_output=True, text=True)
        elapsed = time.perf_counter() - started
        if done.returncode != 0:
            raise RuntimeError(f"child scan failed:\n{done.stderr}")
        return elapsed, json.loads(done.stdout.strip().splitlines()[-1])

    def git_status(self) -> tuple[float, int]:
        started = time.perf_counter()
        done = subprocess.run(
            ["git", "-C", str(self.tree), "status", "--porcelain"], check=True, capture_output=True
        )
        return time.perf_counter() - started, len(done.stdout.splitlines())

    def python_startup(self) -> float:
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        return time.perf_counter() - started

    def rewrite(self, count: int) -> list[str]:
        """Rewrite `count` random tracked text files with new content; remember their originals."""
        chosen = self.rng.sample(self.candidates, count)
        for rel in chosen:
            path = self.tree / rel
            data = path.read_bytes()
            self.originals.setdefault(rel, data)
            self.edit_count += 1
            path.write_bytes(f"# bench edit {self.edit_count}\n".encode() + data)
        return chosen

    def settle(self, state: Path) -> None:
        """Put rewritten files back and let vacant and git absorb it, untimed: each repetition
        of (c) then starts from a clean tree and sees exactly its own 10 changes."""
        self.restore()
        self.in_process(state, store=True)

    def restore(self) -> None:
        for rel, data in self.originals.items():
            (self.tree / rel).write_bytes(data)
        self.originals.clear()
        subprocess.run(["git", "-C", str(self.tree), "status", "--porcelain"], check=True, capture_output=True)

    # -- the measurements ------------------------------------------------------------------

    def run(self) -> None:
        reps, proc = self.args.reps, not self.args.no_process
        _, dirty = self.git_status()
        if dirty:
            print(f"note: git status shows {dirty} changed paths before the run; restoring tracked files",
                  file=sys.stderr)
            subprocess.run(["git", "-C", str(self.tree), "checkout", "-q", "--", "."], check=True)
        # Warm the page cache and git's index: one hashing scan reads every file.
        warm = self.fresh_state()
        self.in_process(warm, store=False)
        self.drop_state(warm)
        for _ in range(3):
            self.git_status()
        for _ in range(3):
            self.python_startup()

        self.progress("(a) first full scan")
        for rep in range(reps):
            for store in (True, False):
                tag = "store" if store else "nostore"
                state = self.fresh_state()
                seconds, result = self.in_process(state, store)
                series = self.s(f"first_{tag}_inproc", f"(a) first scan, {'with' if store else 'no'} store", "in-process")
                series.add(seconds)
                series.notes.append(f"files={result.files} hashed={result.hashed}")
                self.drop_state(state)
                if proc:
                    state = self.fresh_state()
                    seconds, info = self.whole_process(state, store)
                    self.s(f"first_{tag}_proc", f"(a) first scan, {'with' if store else 'no'} store", "process").add(seconds)
                    self.drop_state(state)
            self.s("git_a", "git status --porcelain (during a)", "process").add(self.git_status()[0])

        self.progress("(b) incremental, no change")
        state = self.base / "incremental"
        state.mkdir()
        self.in_process(state, store=True)  # the baseline a run would record
        self.in_process(state, store=True)
        for rep in range(reps):
            seconds, result = self.in_process(state, store=True)
            series = self.s("nochange_inproc", "(b) incremental, no change", "in-process")
            series.add(seconds)
            series.notes.append(f"hashed={result.hashed} delta={'empty' if result.empty else 'NOT EMPTY'}")
            if proc:
                seconds, info = self.whole_process(state, store=True)
                series = self.s("nochange_proc", "(b) incremental, no change", "process")
                series.add(seconds)
                series.notes.append(f"hashed={info['hashed']}")
                self.s("nochange_proc_inner", "(b) ... of which the scan itself", "process (inner)").add(info["scan"])
                self.s("nochange_proc_import", "(b) ... of which import + open index", "process (inner)").add(info["import_open"])
            self.s("git_clean", "git status --porcelain, clean tree", "process").add(self.git_status()[0])
            self.s("python", "python -c pass (interpreter start)", "process").add(self.python_startup())

        self.progress("(c) incremental, 10 files changed")
        for rep in range(reps):
            changed = set(self.rewrite(10))
            seconds, result = self.in_process(state, store=True)
            series = self.s("changed10_inproc", "(c) incremental, 10 changed", "in-process")
            series.add(seconds)
            series.notes.append(f"changed={len(result.changed)} hashed={result.hashed}"
                                + ("" if set(result.changed) == changed else " MISMATCH"))
            seconds, lines = self.git_status()  # the same 10 changes, nothing else
            series = self.s("git_changed", "git status --porcelain, 10 changed", "process")
            series.add(seconds)
            series.notes.append(f"lines={lines}")
            self.settle(state)
            if proc:
                self.rewrite(10)
                seconds, info = self.whole_process(state, store=True)
                series = self.s("changed10_proc", "(c) incremental, 10 changed", "process")
                series.add(seconds)
                series.notes.append(f"changed={info['changed']} hashed={info['hashed']}")
                self.settle(state)

        self.progress("(d) scoped scan of one file")
        for rep in range(reps):
            (rel,) = self.rewrite(1)
            seconds, result = self.in_process(state, store=True, paths=[rel])
            series = self.s("scoped_inproc", "(d) scoped scan, 1 file", "in-process")
            series.add(seconds)
            series.notes.append(f"changed={len(result.changed)}" + ("" if rel in result.changed else " MISSED"))
            if proc:
                (rel,) = self.rewrite(1)
                seconds, info = self.whole_process(state, store=True, paths=[rel])
                series = self.s("scoped_proc", "(d) scoped scan, 1 file", "process")
                series.add(seconds)
                series.notes.append(f"changed={info['changed']}")
                self.s("scoped_proc_inner", "(d) ... of which the scan itself", "process (inner)").add(info["scan"])

    def progress(self, what: str) -> None:
        sys.stdout.flush()
        print(f"... {what}", file=sys.stderr, flush=True)

    def report(self) -> dict:
        summaries = {key: series.summary() for key, series in self.series.items()}
        ref = summaries.get("git_clean") or summaries.get("git_a")
        print()
        print(f"tree: {self.tree}  ({self.tree_info()})")
        print(f"python {platform.python_version()}, {subprocess.run(['git', '--version'], capture_output=True, text=True).stdout.strip()}, "
              f"{os.cpu_count()} CPUs, {platform.platform()}")
        print(f"reps: {self.args.reps}; times in ms; p95 = nearest rank; xgit = this / git status on the clean tree")
        print()
        header = f"{'figure':44} {'how':16} {'n':>3} {'min':>9} {'median':>9} {'p95':>9}  {'xgit med':>8} {'xgit p95':>8}"
        print(header)
        print("-" * len(header))
        for key, row in summaries.items():
            ratio_med = row["median"] / ref["median"] if ref and row["median"] is not None else None
            ratio_p95 = row["p95"] / ref["p95"] if ref and row["p95"] is not None else None
            print(f"{row['label']:44} {row['kind']:16} {row['n']:>3} {ms(row['min'])} {ms(row['median'])} {ms(row['p95'])}"
                  f"  {ratio(ratio_med)} {ratio(ratio_p95)}")
        notes = {key: row["notes"] for key, row in summaries.items() if row["notes"]}
        if notes:
            print()
            print("sanity (what the scans reported):")
            for key, values in notes.items():
                print(f"  {key}: {'; '.join(values)}")
        return {"tree": self.tree_info(), "reps": self.args.reps, "figures": summaries}

    def tree_info(self) -> str:
        try:
            info = json.loads((self.tree / MARKER).read_text())
            return (f"{info['tracked_files']} tracked files, {info['tracked_bytes'] / 1e6:.0f} MB, "
                    f"{info['directories']} dirs, depth <= {info['max_depth']}, seed {info['seed']}")
        except (OSError, ValueError, KeyError):
            return "no generator marker"

    def cleanup(self) -> None:
        self.restore()
        shutil.rmtree(self.base, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, default=HERE / "out" / "tree")
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--seed", type=int, default=1, help="seed for choosing the files to rewrite")
    parser.add_argument("--state-base", type=Path, default=HERE / "out",
                        help="where the throwaway state directories go (outside the tree)")
    parser.add_argument("--no-process", action="store_true", help="skip the whole-process variants")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    if not (args.tree / MARKER).exists():
        print(f"no generated tree at {args.tree}: run `python bench/gen_tree.py {args.tree}` first", file=sys.stderr)
        return 2
    args.state_base.mkdir(parents=True, exist_ok=True)
    if args.state_base.resolve().is_relative_to(args.tree.resolve()):
        print("--state-base must lie outside the tree", file=sys.stderr)
        return 2
    bench = Bench(args)
    try:
        bench.run()
    finally:
        bench.cleanup()
    data = bench.report()
    if args.json:
        args.json.write_text(json.dumps(data, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
