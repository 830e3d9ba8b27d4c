"""The wall's cost per shell step: the same step behind the wall (bubblewrap as `vacant do` wraps
it, vacant/do/bwrap.py) and unwalled (`sh -c` plain), interleaved in the same run. Two steps:
`git status` and a small edit (`sed -i` on one file). Prints medians, p95 (nearest rank) and the
ratio walled/unwalled. Fails (exit 1) when a walled step did not run or bwrap is missing: a figure
of a step that never ran is not a figure.

    .venv/bin/python bench/bench_wall.py [--reps 30]
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from vacant.core.locations import mark_installed
from vacant.core.wall import ensure_hidden_dirs, wall_for
from vacant.do.bwrap import wrap
from vacant.platforms import all_platforms  # noqa: F401 - registers the platforms: the wall guards their hook settings

STEPS = {
    "git status": "git status --porcelain >/dev/null",
    "small edit": "sed -i 's/^value = .*/value = 2/' src/mod.py",
}


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def workspace(base: Path) -> Path:
    ws = base / "ws"
    (ws / "src").mkdir(parents=True)
    for i in range(200):
        (ws / "src" / f"f{i}.py").write_text(f"x = {i}\n" * 20)
    (ws / "src" / "mod.py").write_text("value = 1\n")
    git = ["git", "-c", "user.email=b@vacant.invalid", "-c", "user.name=b"]
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    subprocess.run(["git", "add", "-A"], cwd=ws, check=True)
    subprocess.run([*git, "commit", "-qm", "tree"], cwd=ws, check=True)
    mark_installed(ws)
    ensure_hidden_dirs(ws)
    return ws


def timed(argv: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True)
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        raise SystemExit(f"step failed ({done.returncode}): {argv[-1]}: {done.stderr.decode(errors='replace')[-300:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=30)
    args = parser.parse_args()
    if not shutil.which("bwrap"):
        print("bwrap is missing: apt-get install bubblewrap (scripts/setup does)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="bench-wall-") as scratch:
        base = Path(scratch)
        os.environ.update(HOME=str(base / "home"), VACANT_HOME=str(base / "data"),
                          XDG_CONFIG_HOME=str(base / "home" / ".config"), TMPDIR=str(base))
        ws = workspace(base)
        wall = wall_for(ws)
        print(f"wall cost per shell step, {args.reps} reps each, interleaved (ms)")
        print(f"{'step':<12} {'plain med':>10} {'plain p95':>10} {'walled med':>11} {'walled p95':>11} "
              f"{'ratio med':>10} {'ratio p95':>10} {'cost med':>9}")
        for name, command in STEPS.items():
            plain, walled = [], []
            walled_argv = wrap(["sh", "-c", command], ws, ws, base / "sandbox-tmp", wall, terminal=False)
            timed(["sh", "-c", command], ws)  # warm both once
            timed(walled_argv, ws)
            for _ in range(args.reps):
                plain.append(timed(["sh", "-c", command], ws))
                walled.append(timed(walled_argv, ws))
            mp, mw = statistics.median(plain), statistics.median(walled)
            print(f"{name:<12} {mp:>10.1f} {p95(plain):>10.1f} {mw:>11.1f} {p95(walled):>11.1f} "
                  f"{mw / mp:>10.2f} {p95(walled) / p95(plain):>10.2f} {mw - mp:>9.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
