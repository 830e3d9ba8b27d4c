"""`vacant summary BASE..HEAD` over a 100-commit range, against git doing the least the summary
must: `git diff -w -M BASE HEAD` plus `git blame --porcelain -w -M HEAD` of every file it touches.

    python bench/bench_summary.py [--commits 100] [--files 20] [--reps 5]

A repository gets a base commit of `--files` files; then `--commits` commits, each either a
recorded agent run (a Write step through the real recorder, session start to end) or a person's
edit, a few lines of one file each. Both are timed as processes, alternately; median, p95 and the
ratio are printed. Refuses to print figures when the summary's counts are wrong (the generator
knows how many added lines each writer made).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from vacant.core.calls import HookCall
from vacant.core.locations import mark_installed
from vacant.platforms.claude import PLATFORM
from vacant.record.recorder import Recorder

GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "-c", "commit.gpgsign=false"]


def build(root: Path, commits: int, files: int, seed: int) -> tuple[str, dict[str, int]]:
    """The history; returns the base commit and the expected added lines per writer."""
    rng = random.Random(seed)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    content = {f"src/m{n}.py": [f"base_{n}_{i} = {i}" for i in range(200)] for n in range(files)}
    written: dict[tuple[str, str], str] = {}  # (path, line) -> writer
    for path, lines in content.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("\n".join(lines) + "\n")
    subprocess.run([*GIT, "-C", str(root), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(root), "commit", "-qm", "base"], check=True)
    base = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], check=True, capture_output=True,
                          text=True).stdout.strip()
    mark_installed(root)
    for number in range(commits):
        path = rng.choice(sorted(content))
        lines = content[path]
        at = rng.randrange(len(lines))
        agent = rng.random() < 0.6
        new = [f"c{number}_{k} = {'agent' if agent else 'person'}_{k}" for k in range(rng.randint(1, 5))]
        lines[at:at] = new
        written.update(((path, text), "agent" if agent else "person") for text in new)
        if agent:
            session = f"run-{number}"
            target = root / path
            call = dict(tool="Write", key=f"toolu_{number}", scope=[str(target)], tool_input={"file_path": str(target)})
            Recorder(root, session, PLATFORM).handle(HookCall("session_start", session, root, source="startup"))
            Recorder(root, session, PLATFORM).handle(HookCall("tool_pre", session, root, **call))
            target.write_text("\n".join(lines) + "\n")
            Recorder(root, session, PLATFORM).handle(HookCall("tool_post", session, root, outcome="ok", **call))
            Recorder(root, session, PLATFORM).handle(HookCall("session_end", session, root, reason="other"))
        else:
            (root / path).write_text("\n".join(lines) + "\n")
        subprocess.run([*GIT, "-C", str(root), "commit", "-qam", f"commit {number}"], check=True)
    expected = {"agent": 0, "person": 0}
    for path, lines in content.items():
        for text in lines:
            if (path, text) in written:
                expected[written[(path, text)]] += 1
    return base, expected


def reference(root: Path, base: str) -> None:
    """git's least: the range's diff, and a blame of every file it touches at HEAD."""
    names = subprocess.run(["git", "-C", str(root), "diff", "-w", "-M", "--name-only", "-z", base, "HEAD"],
                           check=True, capture_output=True).stdout.decode().split("\0")
    subprocess.run(["git", "-C", str(root), "diff", "-w", "-M", "-U0", base, "HEAD"], check=True, capture_output=True)
    for name in filter(None, names):
        subprocess.run(["git", "-C", str(root), "blame", "--porcelain", "-w", "-M", "HEAD", "--", name], check=True,
                       capture_output=True)


def figures(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--commits", type=int, default=100)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="vacant-bench-summary-"))
    try:
        base, expected = build(root, args.commits, args.files, args.seed)
        command = [str(Path(sys.executable).parent / "vacant"), "summary", f"{base}..HEAD", "--json"]
        shown = json.loads(subprocess.run(command, cwd=root, check=True, capture_output=True, text=True).stdout)
        if (shown["agent_lines"], shown["people_lines"]) != (expected["agent"], expected["person"]):
            raise SystemExit(f"summary counts {shown['agent_lines']}/{shown['people_lines']}, expected "
                             f"{expected['agent']}/{expected['person']}: no figures")
        ours, git = [], []
        for _ in range(args.reps):
            started = time.perf_counter()
            subprocess.run(command, cwd=root, check=True, capture_output=True)
            ours.append(time.perf_counter() - started)
            started = time.perf_counter()
            reference(root, base)
            git.append(time.perf_counter() - started)
        (m, p), (gm, gp) = figures(ours), figures(git)
        print(f"range: {args.commits} commits over {args.files} files, {shown['added']} added lines "
              f"({shown['agent_lines']} by {len(shown['runs'])} runs), reps {args.reps}")
        print(f"vacant summary (process): median {m * 1000:.0f} ms  p95 {p * 1000:.0f} ms")
        print(f"git diff + git blame of each file (processes): median {gm * 1000:.0f} ms  p95 {gp * 1000:.0f} ms")
        print(f"ratio vacant/git: median {m / gm:.2f}  p95 {p / gp:.2f}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
