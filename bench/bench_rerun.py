"""The re-run's cost at Stop ("Who wrote it", docs/LEVELS.md): the same Stop with it and without it.

    python bench/bench_rerun.py [--steps 40] [--files 200] [--reps 7]

A run of N steps on a workspace of F small files (Write steps and shell steps writing notes, every
command really run), the middle step a shell step that breaks the check:

* `agent`: its own `sed` breaks it; the re-run reproduces the change (provable, one re-run);
* `person`: the command is `sleep 0.1; echo done` and a person's save breaks the check while it
  runs (gap: two re-runs, one check on the constructed state).

Two checks: a `grep` guard (a few ms) and fixtures/scenarios/check_value.py (a Python process).
Each Stop pipeline is timed with authorship on, and off (Pipeline._authored as the identity, as
before it existed), interleaved rep by rep on the same recorded run: medians, their ratio, the
added ms, check runs (without -> with), re-runs and their seconds (the last Stop's). Prints figures; asserts only the grades (a benchmark of a wrong
answer is worthless).
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from vacant.attribute.stop import Pipeline
from vacant.core.calls import HookCall
from vacant.core.locations import mark_installed
from vacant.platforms.claude import PLATFORM
from vacant.policy.contract.contract import load_contract
from vacant.record.recorder import Recorder

CHECK = Path(__file__).resolve().parent.parent / "fixtures" / "scenarios" / "check_value.py"
CHECKS = {"grep": "grep -qx 'RATE = 0.08' config.py", "python": "python3 check_value.py RATE config.py 0.08"}


def workspace(files: int, check: str) -> Path:
    root = Path(tempfile.mkdtemp(prefix="vacant-bench-rerun-"))
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    mark_installed(root)
    shutil.copyfile(CHECK, root / "check_value.py")
    (root / "config.py").write_text("RATE = 0.08\n")
    for number in range(files):
        (root / "src" / f"d{number % 10}").mkdir(parents=True, exist_ok=True)
        (root / "src" / f"d{number % 10}" / f"m{number}.py").write_text(f"VALUE_{number} = {number}\n" * 20)
    (root / "vacant.toml").write_text(f'[[guard]]\nname = "rate"\ncommand = "{CHECKS[check]}"\n')
    return root


def step(recorder: Recorder, root: Path, number: int, tool: str, tool_input: dict, scope, effect) -> None:
    key = f"toolu_{number}"
    recorder.handle(HookCall("tool_pre", "bench", root, tool=tool, key=key, scope=scope, tool_input=tool_input,
                             cwd=str(root)))
    effect()
    recorder.handle(HookCall("tool_post", "bench", root, tool=tool, key=key, scope=scope, tool_input=tool_input,
                             outcome="ok", exit_code=0 if tool == "Bash" else None, cwd=str(root)))


def shell(root: Path, command: str, person: bool = False):
    def effect() -> None:
        subprocess.run(["bash", "-c", command], cwd=root, check=True, capture_output=True)
        if person:
            (root / "config.py").write_text("RATE = 0.09\n")
    return effect


def record(root: Path, steps: int, scenario: str) -> Path:
    recorder = Recorder(root, "bench", PLATFORM)
    recorder.handle(HookCall("session_start", "bench", root, source="startup"))
    for number in range(1, steps + 1):
        note = f"notes/n{number % 7}.txt"
        if number == steps // 2:
            command = "sed -i 's/^RATE = .*/RATE = 0.09/' config.py" if scenario == "agent" else "sleep 0.1; echo done"
            step(recorder, root, number, "Bash", {"command": command}, None, shell(root, command, scenario == "person"))
        elif number % 2:
            command = f"mkdir -p notes && printf %s {shlex.quote(f'note {number}')} > {note}"
            step(recorder, root, number, "Bash", {"command": command}, None, shell(root, command))
        else:
            path = root / note
            tool_input = {"file_path": str(path), "content": f"written {number}\n"}
            step(recorder, root, number, "Write", tool_input, [str(path)],
                 lambda path=path, number=number: (path.parent.mkdir(exist_ok=True), path.write_text(f"written {number}\n")))
    return recorder.log.run_dir


def timed(root: Path, run_dir: Path, authorship: bool) -> tuple[float, dict]:
    pipeline = Pipeline(root, run_dir, load_contract(root), budget_s=3600)
    if not authorship:
        pipeline._authored = lambda finding, flag_text, flip, attribution: attribution  # as before it existed
    started = time.perf_counter()
    report = pipeline.run()
    return time.perf_counter() - started, report


def measure(steps: int, files: int, scenario: str, check: str, reps: int) -> dict[str, float]:
    root = workspace(files, check)
    try:
        run_dir = record(root, steps, scenario)
        on, off, report, before = [], [], {}, {}
        for _ in range(reps):
            seconds, report = timed(root, run_dir, True)
            on.append(seconds)
            seconds, before = timed(root, run_dir, False)
            off.append(seconds)
        (finding,) = report["findings"]
        assert finding["level"] == ("provable" if scenario == "agent" else "gap"), finding
        return {"on": statistics.median(on), "off": statistics.median(off), "checks": report["check_runs"],
                "checks_off": before["check_runs"], "reruns": report["reruns"]["runs"],
                "rerun_s": report["reruns"]["seconds"]}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args()
    os.environ.setdefault("VACANT_HOME", tempfile.mkdtemp(prefix="vacant-bench-home-"))
    print(f"{args.steps} steps, {args.files} files, {args.reps} reps, medians")
    print(f"{'scenario':>9}{'check':>8}{'without s':>11}{'with s':>9}{'ratio':>8}{'added ms':>10}"
          f"{'checks':>10}{'re-runs':>9}{'re-run s':>10}")
    for scenario in ("agent", "person"):
        for check in CHECKS:
            row = measure(args.steps, args.files, scenario, check, args.reps)
            print(f"{scenario:>9}{check:>8}{row['off']:>11.3f}{row['on']:>9.3f}{row['on'] / row['off']:>7.2f}x"
                  f"{(row['on'] - row['off']) * 1000:>10.0f}{row['checks_off']:>5}->{row['checks']:<3}"
                  f"{row['reruns']:>9}{row['rerun_s']:>10.3f}")


if __name__ == "__main__":
    main()
