"""Stop cost on a real project's own test suite: one broken test over a 40-step run, as a ratio to
one full run of the suite measured in the same run.

    python bench/bench_stop_suite.py [--steps 40] [--reps 3] [--many] [--compare] [--unwalled] [--shell agent|person]

`--many`: the planted step breaks `take` (more_itertools/recipes.py), which 29 tests depend on:
every one of them must be graded `provable` on that step. `--compare`: each rep's Stop also runs
with the failing tests bisected one by one (vacant's way before one bisection for many tests),
interleaved in the same run, and prints both. `--unwalled`: each rep's Stop also runs with the
checks unwalled (as the person, in the scratch directory: before the walled runner), interleaved.
`--shell agent|person`: the planted step is a shell step, the agent's own `python3 -c` making the
break (provable: its re-run reproduces it) or `sleep 0.1; echo tests done` while a person saves the
break (gap: the re-run does not); each rep's Stop also runs without who-wrote-it (no re-run, the
grade as before it existed), interleaved: what the re-run costs, as a ratio.

The suite is more-itertools 10.5.0's (663 tests, pytest), from its PyPI sdist fetched by pip and
verified by sha256 (cached under ~/.cache/vacant-bench; none of its code is in this repository).
Each rep records a run through the real recorder: noise edits to its docs, and one step that breaks
`quantify`'s default predicate (one test fails); then the Stop pipeline replays it. Reported: the
full suite's wall time (median of the reps), the Stop's (median, p95), the ratio, check runs, how
many of them ran the one failing test alone, and how many answers were reused from a run whose
files read were the same (vacant.attribute.samereads). Prints figures; asserts the answer is right.
"""

from __future__ import annotations

import argparse
import os
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from vacant.attribute.stop import Pipeline
from vacant.core.calls import HookCall
from vacant.core.locations import mark_installed
from vacant.platforms.claude import PLATFORM
from vacant.policy.contract.contract import load_contract
from vacant.record.recorder import Recorder

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "plugins"))  # sdist.py moved there
from sdist import MORE_ITERTOOLS, SUITE, fetch_sdist

CACHE = Path(os.environ.get("VACANT_BENCH_CACHE", Path.home() / ".cache" / "vacant-bench"))
BREAK = ("more_itertools/recipes.py", "def quantify(iterable, pred=bool):", "def quantify(iterable, pred=lambda x: 1):")
BREAK_MANY = ("more_itertools/recipes.py", "    return list(islice(iterable, n))\n", "    return list(islice(iterable, n + 1))\n")
MANY_FAILING = 29  # the tests that fail with `take` broken (measured with the suite itself)


def planted_shell(root: Path, recorder: Recorder, key: str, broken: tuple[str, str, str], who: str) -> None:
    """The planted step as a shell step: the agent's own `python3 -c` that edits the file (`agent`),
    or `sleep 0.1; echo tests done` while a person saves the same edit (`person`)."""
    rel, old, new = broken
    program = f"import pathlib; p = pathlib.Path({rel!r}); p.write_text(p.read_text().replace({old!r}, {new!r}, 1))"
    command = "python3 -c " + shlex.quote(program) if who == "agent" else "sleep 0.1; echo tests done"
    tool_input = {"command": command}
    recorder.handle(HookCall("tool_pre", "bench", root, tool="Bash", key=key, scope=None, tool_input=tool_input,
                             cwd=str(root)))
    subprocess.run(["bash", "-c", command], cwd=root, check=True, capture_output=True)
    if who == "person":
        (root / rel).write_text((root / rel).read_text().replace(old, new, 1))
    recorder.handle(HookCall("tool_post", "bench", root, tool="Bash", key=key, scope=None, tool_input=tool_input,
                             outcome="ok", exit_code=0, cwd=str(root)))


def record_run(root: Path, steps: int, planted: int, broken: tuple[str, str, str] = BREAK,
               shell: str | None = None) -> Path:
    recorder = Recorder(root, "bench", PLATFORM)
    recorder.handle(HookCall("session_start", "bench", root, source="startup"))
    for number in range(1, steps + 1):
        if number == planted and shell is not None:
            planted_shell(root, recorder, f"toolu_{number}", broken, shell)
            continue
        if number == planted:
            rel = broken[0]
            content = (root / rel).read_text().replace(broken[1], broken[2], 1)
        else:
            rel = f"docs/notes{number % 5}.rst"
            content = f"note {number}\n"
        key = f"toolu_{number}"
        tool_input = {"file_path": str(root / rel), "content": content}
        recorder.handle(HookCall("tool_pre", "bench", root, tool="Write", key=key, scope=[str(root / rel)],
                                 tool_input=tool_input))
        (root / rel).write_text(content)
        recorder.handle(HookCall("tool_post", "bench", root, tool="Write", key=key, scope=[str(root / rel)],
                                 tool_input=tool_input, outcome="ok"))
    return recorder.log.run_dir


def measure(tree: Path, steps: int, seed: int, many: bool = False, grouped: bool = True,
            walled: bool = True, shell: str | None = None, authorship: bool = True) -> dict[str, float]:
    root = Path(tempfile.mkdtemp(prefix="vacant-bench-suite-")) / "ws"
    shutil.copytree(tree, root)
    try:
        mark_installed(root)
        (root / "vacant.toml").write_text(f'[[check]]\nname = "suite"\ncommand = "{SUITE}"\n')
        started = time.perf_counter()
        subprocess.run(SUITE, shell=True, cwd=root, capture_output=True, check=True)
        suite_s = time.perf_counter() - started
        planted = random.Random(seed).randint(steps // 4, 3 * steps // 4)
        run_dir = record_run(root, steps, planted, BREAK_MANY if many else BREAK, shell)
        pipeline = Pipeline(root, run_dir, load_contract(root), budget_s=3600)
        if not authorship:  # who wrote it off: no re-run, the flip's grade as it was before it existed
            pipeline._authored = lambda finding, flag_text, flip, attribution: attribution
        if not grouped:  # each failing test bisected alone, as before one bisection for many tests
            pipeline._group_failing_tests = lambda findings: None
        if not walled:  # the checks as the person, in the scratch directory (before the walled runner)
            pipeline._site = lambda scratch_dir: None
        started = time.perf_counter()
        report = pipeline.run()
        stop_s = time.perf_counter() - started
        findings = report["findings"]
        level = "gap" if shell == "person" and authorship else "provable"  # without it, the person's save was provable
        if many:
            assert len(findings) == MANY_FAILING, len(findings)
            assert all((f["flip_step"], f["level"]) == (planted, level) for f in findings), findings
        else:
            [finding] = findings
            assert (finding["test"], finding["flip_step"], finding["level"]) == (
                "pytest::tests.test_recipes.QuantifyTests::test_happy_path", planted, level), finding
        return {"suite_s": suite_s, "stop_s": stop_s, "runs": report["check_runs"],
                "alone": pipeline.checks.selected_runs, "reused": pipeline.checks.same_reads.reused,
                "planted": planted, "reruns": report["reruns"]["runs"], "rerun_s": report["reruns"]["seconds"]}
    finally:
        shutil.rmtree(root.parent, ignore_errors=True)


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--many", action="store_true", help="break `take`: 29 failing tests at one step")
    parser.add_argument("--compare", action="store_true", help="also bisect each failing test alone, interleaved")
    parser.add_argument("--unwalled", action="store_true", help="also run the checks unwalled, interleaved")
    parser.add_argument("--shell", choices=("agent", "person"), help="the planted step is a shell step (the agent's "
                        "own python3 -c, or a person's save while `sleep; echo` runs); also the Stop without "
                        "who-wrote-it's re-run, interleaved")
    args = parser.parse_args()
    os.environ.setdefault("VACANT_HOME", tempfile.mkdtemp(prefix="vacant-bench-home-"))
    tree = fetch_sdist(CACHE, *MORE_ITERTOOLS)
    ways = [("together", True, True, True)] + ([("one by one", False, True, True)] if args.compare else []) \
        + ([("unwalled", True, False, True)] if args.unwalled else []) \
        + ([("no re-run", True, True, False)] if args.shell else [])
    rows: dict[str, list[dict[str, float]]] = {name: [] for name, *_ in ways}
    for seed in range(args.reps):
        for name, grouped, walled, authorship in ways:
            rows[name].append(measure(tree, args.steps, seed, args.many, grouped, walled, args.shell, authorship))
    print(f"{'failing tests':>14}{'bisected':>12}{'steps':>6}{'suite s (med)':>15}{'stop s (med)':>14}"
          f"{'stop s (p95)':>14}{'ratio':>8}{'check runs':>12}{'selected':>10}{'reused':>8}{'re-runs':>9}"
          f"{'re-run s':>10}")
    for name, *_ in ways:
        got = rows[name]
        suite = statistics.median(r["suite_s"] for r in got)
        stops = [r["stop_s"] for r in got]
        print(f"{MANY_FAILING if args.many else 1:>14}{name:>12}{args.steps:>6}{suite:>15.2f}"
              f"{statistics.median(stops):>14.2f}{p95(stops):>14.2f}{statistics.median(stops) / suite:>7.1f}x"
              f"{max(r['runs'] for r in got):>12}{max(r['alone'] for r in got):>10}{max(r['reused'] for r in got):>8}"
              f"{max(r['reruns'] for r in got):>9}{statistics.median(r['rerun_s'] for r in got):>10.2f}")
    if args.shell:
        with_it = statistics.median(r["stop_s"] for r in rows["together"])
        without = statistics.median(r["stop_s"] for r in rows["no re-run"])
        print(f"the Stop with who-wrote-it's re-run against without it, same run: {with_it / without:.2f}x "
              f"({(with_it - without):+.2f} s)")


if __name__ == "__main__":
    main()
