"""`vacant blame` on a 2,000-line file from a warm state, against `git blame` on the same history.

    python bench/bench_blame.py [--lines 2000] [--steps 60] [--reps 15]

A run of `--steps` Write steps is recorded through the real recorder: each step edits, inserts,
deletes or moves a few lines of one file of `--lines` lines. The same versions are committed to a
git repository (one commit per step) as the reference. Then `blame_file` (in-process, the state
warm in the page cache) and `git blame --porcelain` (a process) are timed alternately. Prints
median and p95 and the ratio to git; asserts nothing about time, but refuses to print figures
when the blame is wrong (every line must be blamed on the step that wrote it).
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from vacant.core.calls import HookCall
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
    return root / ".vacant" / "runs" / "bench", {text: author[text] for text in content}


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
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
