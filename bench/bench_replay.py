"""Replay cost: runs of N steps with one planted finding, bisection against a linear replay.

    python bench/bench_replay.py [--steps 50 200 1000] [--reps 3]

Each run is recorded through the real recorder (Write steps on a small workspace, one of them
plants a wrong value that stays), then the Stop pipeline finds the flip. Reported per N: check
executions and wall time for bisection, the goal bound 2*ceil(log2 N)+2, and the same figures for
a linear replay over every state in the same run. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from vacant.attribute.replay import Presence, _linear
from vacant.attribute.stop import Pipeline
from vacant.core.calls import HookCall
from vacant.platforms.claude import PLATFORM
from vacant.policy.contract.contract import load_contract
from vacant.record.recorder import Recorder

CHECK = Path(__file__).resolve().parent.parent / "fixtures" / "scenarios" / "check_value.py"
TOML = 'task_family = "bench"\n\n[[check]]\nname = "rate"\ncommand = "python3 check_value.py RATE config.py 0.08"\n'


def record_run(root: Path, steps: int, planted: int) -> Path:
    """`steps` Write steps over a few files; step `planted` writes the wrong RATE, which stays."""
    shutil.copyfile(CHECK, root / "check_value.py")
    (root / "vacant.toml").write_text(TOML)
    (root / "config.py").write_text("RATE = 0.08\n")
    recorder = Recorder(root, "bench", PLATFORM)
    recorder.handle(HookCall("session_start", "bench", root, source="startup"))
    for number in range(1, steps + 1):
        target = "config.py" if number == planted else f"notes/n{number % 17}.txt"
        content = "RATE = 0.09\n" if number == planted else f"note {number}\n"
        key = f"toolu_{number}"
        pre = HookCall("tool_pre", "bench", root, tool="Write", key=key, scope=[str(root / target)],
                       tool_input={"file_path": str(root / target), "content": content})
        recorder.handle(pre)
        (root / target).parent.mkdir(exist_ok=True)
        (root / target).write_text(content)
        post = HookCall("tool_post", "bench", root, tool="Write", key=key, scope=[str(root / target)],
                        tool_input=pre.tool_input, outcome="ok")
        recorder.handle(post)
    return recorder.log.run_dir


def measure(steps: int, seed: int) -> dict[str, float]:
    root = Path(tempfile.mkdtemp(prefix="vacant-bench-replay-"))
    try:
        planted = random.Random(seed).randint(1, steps)
        run_dir = record_run(root, steps, planted)
        contract = load_contract(root)
        started = time.perf_counter()
        report = Pipeline(root, run_dir, contract, budget_s=3600).run()
        bisect_s = time.perf_counter() - started
        found = report["findings"][0]
        assert found["step"] == planted, (found, planted)  # a benchmark of a wrong answer is worthless

        linear = Pipeline(root, run_dir, contract, budget_s=3600)
        linear.scratch_dir = Path(tempfile.mkdtemp(prefix="vacant-bench-linear-"))
        from vacant.attribute.replay import Scratch
        from vacant.attribute.statechecks import StateChecks

        linear.scratch = Scratch(linear.timeline, linear.store, linear.scratch_dir, root)
        linear.checks = StateChecks(linear.scratch)
        check = contract.check[0]
        target = found["id"]
        started = time.perf_counter()
        presence = Presence(lambda i, cached: any(f.id == target for f in linear.check_at(check, i, cached).findings))
        flip = _linear(presence, linear.timeline.last, float("inf"), False)
        linear_s = time.perf_counter() - started
        shutil.rmtree(linear.scratch_dir, ignore_errors=True)
        return {"bisect_runs": report["check_runs"], "bisect_s": bisect_s, "linear_runs": linear.check_runs,
                "linear_s": linear_s, "states": report["states"], "linear_flip_ok": flip.index is not None}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, nargs="+", default=[50, 200, 1000])
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("VACANT_HOME", tempfile.mkdtemp(prefix="vacant-bench-home-"))
    print(f"{'steps':>6}{'bound':>7}{'bisect runs':>13}{'bisect s (med)':>16}{'linear runs':>13}"
          f"{'linear s (med)':>16}{'speed-up':>10}")
    for steps in args.steps:
        rows = [measure(steps, seed) for seed in range(args.reps)]
        bound = 2 * math.ceil(math.log2(steps)) + 2
        bisect_s = statistics.median(r["bisect_s"] for r in rows)
        linear_s = statistics.median(r["linear_s"] for r in rows)
        runs = max(r["bisect_runs"] for r in rows)
        print(f"{steps:>6}{bound:>7}{runs:>13}{bisect_s:>16.2f}{max(r['linear_runs'] for r in rows):>13}"
              f"{linear_s:>16.2f}{linear_s / bisect_s:>9.1f}x")


if __name__ == "__main__":
    main()
