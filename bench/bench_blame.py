"""`vacant blame` on a 2,000-line file from a warm state, against `git blame` on the same history.

    python bench/bench_blame.py [--lines 2000] [--steps 60] [--reps 15]

A run of `--steps` Write steps is recorded through the real recorder: each step edits, inserts,
deletes or moves a few lines of one file of `--lines` lines. The same versions are committed to a
git repository (one commit per step) as the reference. Then `blame_file` (in-process, the state
warm in the page cache) and `git blame --porcelain` (a process) are timed alternately; then the
whole command, `vacant blame --porcelain` (a process: git's blame with -w -M, the recorded steps
beside it), against `git blame --porcelain -w -M` (a process). Prints median and p95 and the ratio
to git; asserts nothing about time, but refuses to print figures when the blame is wrong (every
line must be blamed on the step that wrote it, and carry git's own commit).
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from vacant.core.calls import HookCall
from vacant.core.locations import mark_installed, state_dir
from vacant.platforms.claude import PLATFORM
from vacant.record.recorder import Recorder
from vacant.show.blame import blame_file

GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "-c", "commit.gpgsign=false"]


def record(root: Path, lines: int, steps: int, seed: int) -> tuple[Path, dict[str, int]]:
    rng = random.Random(seed)
    target = root / "big.py"
    content = [f"value_{i} = {i}  # baseline" for i in range(lines)]
    author = {text: 0 for text in content}
    target.write_text("\n".join(content) + "\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([*GIT, "-C", str(root), "add", "big.py"], check=True)
    subprocess.run([*GIT, "-C", str(root), "commit", "-qm", "baseline"], check=True)
    mark_installed(root)  # after git init: the state lives in .git/vacant
    Recorder(root, "bench", PLATFORM).handle(HookCall("session_start", "bench", root, source="startup"))
    for step in range(1, steps + 1):
        at = rng.randrange(len(content))
        kind = rng.choice(("edit", "insert", "delete", "move"))
        if kind == "edit":
            for i in range(at, min(at + 3, len(content))):
                content[i] = f"value_{i} = {step}  # edited by step {step}"
                author[content[i]] = step
        elif kind == "insert":
            new = [f"extra_{step}_{k} = {k}" for k in range(4)]
            content[at:at] = new
            author.update((text, step) for text in new)
        elif kind == "delete":
            del content[at:at + 2]
        else:
            block = content[at:at + 5]
            del content[at:at + 5]
            to = rng.randrange(len(content) + 1)
            content[to:to] = block
        call = dict(tool="Write", key=f"toolu_{step}", scope=[str(target)], tool_input={"file_path": str(target)})
        Recorder(root, "bench", PLATFORM).handle(HookCall("tool_pre", "bench", root, **call))
        target.write_text("\n".join(content) + "\n")
        Recorder(root, "bench", PLATFORM).handle(HookCall("tool_post", "bench", root, outcome="ok", **call))
        subprocess.run([*GIT, "-C", str(root), "commit", "-qam", f"step {step}"], check=True)
    return state_dir(root) / "runs" / "bench", {text: author[text] for text in content}


def figures(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="vacant-bench-blame-"))
    try:
        run_dir, expected = record(root, args.lines, args.steps, args.seed)
        result = blame_file(root, "big.py", [run_dir])  # warms the page cache
        steps = {line.text: (line.author.step or 0) for line in result.lines}
        wrong = sum(1 for text, step in expected.items() if steps.get(text) != step)
        if wrong:
            raise SystemExit(f"blame is wrong on {wrong} line(s): no figures")
        ours, git = [], []
        for _ in range(args.reps):
            started = time.perf_counter()
            blame_file(root, "big.py", [run_dir])
            ours.append(time.perf_counter() - started)
            started = time.perf_counter()
            subprocess.run(["git", "-C", str(root), "blame", "--porcelain", "big.py"], check=True, capture_output=True)
            git.append(time.perf_counter() - started)
        (m, p), (gm, gp) = figures(ours), figures(git)
        print(f"file: {len(result.lines)} lines after {args.steps} recorded steps (seed {args.seed}), reps {args.reps}")
        print(f"vacant blame (in-process, warm): median {m * 1000:.1f} ms  p95 {p * 1000:.1f} ms")
        print(f"git blame --porcelain (process): median {gm * 1000:.1f} ms  p95 {gp * 1000:.1f} ms")
        print(f"ratio vacant/git: median {m / gm:.2f}  p95 {p / gp:.2f}")
        command(root, args.reps, expected)

    finally:
        shutil.rmtree(root, ignore_errors=True)


def _commits(porcelain: str) -> list[str]:
    found, lines = [], porcelain.split("\n")
    for line in lines:
        head = line.split(" ")
        if len(head) >= 3 and len(head[0]) == 40 and head[1].isdigit():
            found.append(head[0])
    return found


def command(root: Path, reps: int, expected: dict[str, int]) -> None:
    """The whole `vacant blame --porcelain` (a process) against `git blame --porcelain -w -M`."""
    vacant = [str(Path(sys.executable).parent / "vacant"), "blame", "--porcelain", "big.py"]
    reference = ["git", "-C", str(root), "blame", "--porcelain", "-w", "-M", "big.py"]
    shown = subprocess.run(vacant, cwd=root, check=True, capture_output=True, text=True).stdout
    theirs = subprocess.run(reference, check=True, capture_output=True, text=True).stdout
    if _commits(shown) != _commits(theirs):
        raise SystemExit("vacant blame --porcelain gives other commits than git blame: no figures")
    steps = [int(line.split(" ")[1]) for line in shown.split("\n") if line.startswith("vacant-step ")]
    if len(steps) != sum(1 for step in expected.values() if step):
        raise SystemExit("vacant blame --porcelain names the wrong number of step lines: no figures")
    ours, git, startup = [], [], []
    for _ in range(reps):
        started = time.perf_counter()
        subprocess.run(vacant, cwd=root, check=True, capture_output=True)
        ours.append(time.perf_counter() - started)
        started = time.perf_counter()
        subprocess.run(reference, check=True, capture_output=True)
        git.append(time.perf_counter() - started)
        started = time.perf_counter()
        subprocess.run([vacant[0], "--version"], cwd=root, check=True, capture_output=True)
        startup.append(time.perf_counter() - started)
    (m, p), (gm, gp), (sm, sp) = figures(ours), figures(git), figures(startup)
    print(f"vacant --version (process, the CLI's start-up): median {sm * 1000:.1f} ms  p95 {sp * 1000:.1f} ms")
    print(f"vacant blame --porcelain (process): median {m * 1000:.1f} ms  p95 {p * 1000:.1f} ms")
    print(f"git blame --porcelain -w -M (process): median {gm * 1000:.1f} ms  p95 {gp * 1000:.1f} ms")
    print(f"ratio vacant/git (commands): median {m / gm:.2f}  p95 {p / gp:.2f}")


if __name__ == "__main__":
    main()
