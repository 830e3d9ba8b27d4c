"""Stop cost with only the tests a change can affect (issue 43): a generated suite of 2,050 pytest
tests in 41 files, each test about 10 ms (one full run about 20 s, like the issue's), as a ratio to
one full suite run measured in the same run; and the baseline probe's recorded run, which the Stops
stand on, as a ratio to the same.

    python bench/bench_stop_selection.py [--reps 1] [--whole] [--runner pytest|unittest]

The suite: 40 modules `pkg/mN.py` and a shared `pkg/shared.py`; test file N holds 50 tests on
`pkg/mN.py` (its tests only import it), and the first 20 files also use the shared module; one more
file holds 50 tests of the shared module alone. The baseline probe records each test's inputs (in
the background after a run starts: not timed, as in a session). Two runs, each through the real
recorder and the real Stop, walled where bubblewrap runs:

(a) one step breaks `pkg/m7.py` (its 50 tests fail), then three harmless steps: every finding must
    be graded `provable` on that step;
(b) one step changes `pkg/shared.py` (harmlessly), then three harmless steps: the Stop is green;
    the share of the suite its final run selected is printed.

`--runner unittest`: the same suite as `unittest.TestCase` classes (one per file), run by
`python -m unittest discover`.

`--whole`: each rep's Stops also run without the record (the whole suite every time, as before),
interleaved. Prints figures; asserts the answers are right.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from vacant.attribute import baseline_probe, testinputs
from vacant.attribute.stop import Pipeline
from vacant.core.calls import HookCall
from vacant.core.locations import mark_installed
from vacant.platforms.claude import PLATFORM
from vacant.policy.contract.contract import load_contract
from vacant.record.recorder import Recorder

FILES, PER_FILE, SHARED_USERS = 40, 50, 20
SUITES = {"pytest": f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {sys.executable} -m pytest -q -p no:cacheprovider tests",
          "unittest": f"{sys.executable} -m unittest discover -s tests -t ."}
BROKEN = 7


def generate(root: Path, runner: str) -> None:
    (root / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pytest.ini").write_text("[pytest]\n")
    if runner == "unittest":
        (root / "tests" / "__init__.py").write_text("")  # a package: unittest's discovery finds it
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "shared.py").write_text("import time\n\n\ndef work(n):\n    time.sleep(0.01)\n    return n * 2\n")
    for n in range(FILES):
        (root / "pkg" / f"m{n}.py").write_text(f"import time\n\n\ndef value(k):\n    time.sleep(0.01)\n    return k + {n}\n")
        uses = n < SHARED_USERS
        lines = [f"from pkg.m{n} import value"] + (["from pkg.shared import work"] if uses else [])
        checks = [f"assert value({k}) == {k + n}" + (f" and work({k}) == {2 * k}" if uses and k % 5 == 0 else "")
                  for k in range(PER_FILE)]
        (root / "tests" / f"test_m{n}.py").write_text(test_file(lines, checks, runner))
    checks = [f"assert work({k}) == {2 * k}" for k in range(PER_FILE)]
    (root / "tests" / "test_shared.py").write_text(test_file(["from pkg.shared import work"], checks, runner))


def test_file(imports: list[str], checks: list[str], runner: str) -> str:
    """Test k asserts checks[k]: a function (pytest), or a method of one TestCase (unittest)."""
    if runner == "unittest":
        lines = ["import unittest", *imports, "class Test(unittest.TestCase):"]
        lines += [f"    def test_{k}(self):\n        {check}" for k, check in enumerate(checks)]
    else:
        lines = imports + [f"def test_{k}():\n    {check}" for k, check in enumerate(checks)]
    return "\n".join(lines) + "\n"


def record_run(root: Path, first: tuple[str, str]) -> Path:
    recorder = Recorder(root, "bench", PLATFORM)
    recorder.handle(HookCall("session_start", "bench", root, source="startup"))
    steps = [first] + [(f"docs/notes{n}.md", f"note {n}\n") for n in range(3)]
    for number, (rel, content) in enumerate(steps, start=1):
        key = f"toolu_{number}"
        tool_input = {"file_path": str(root / rel), "content": content}
        recorder.handle(HookCall("tool_pre", "bench", root, tool="Write", key=key, scope=[str(root / rel)],
                                 tool_input=tool_input))
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(content)
        recorder.handle(HookCall("tool_post", "bench", root, tool="Write", key=key, scope=[str(root / rel)],
                                 tool_input=tool_input, outcome="ok"))
    return recorder.log.run_dir


def stop(tree: Path, case: str, recorded: bool, suite: str) -> dict:
    root = Path(tempfile.mkdtemp(prefix="vacant-bench-selection-")) / "ws"
    shutil.copytree(tree, root)
    try:
        mark_installed(root)
        (root / "vacant.toml").write_text(f'[[guard]]\nname = "suite"\ncommand = "{suite}"\n')
        if case == "a":
            text = (root / "pkg" / f"m{BROKEN}.py").read_text().replace(f"k + {BROKEN}", f"k + {BROKEN + 1}")
            run_dir = record_run(root, (f"pkg/m{BROKEN}.py", text))
        else:
            run_dir = record_run(root, ("pkg/shared.py", (root / "pkg" / "shared.py").read_text() + "# tidied\n"))
        probe_s = None
        if recorded:
            started = time.perf_counter()
            baseline_probe.probe(root, run_dir)  # in a session: in the background after the run starts
            probe_s = time.perf_counter() - started
            assert any((run_dir / testinputs.RECORDS).iterdir()), "the probe recorded no inputs"
        started = time.perf_counter()
        report = Pipeline(root, run_dir, load_contract(root), budget_s=3600).run()
        stop_s = time.perf_counter() - started
        findings = report["findings"]
        if case == "a":
            assert len(findings) == PER_FILE, len(findings)
            assert all((f["step"], f["level"]) == (1, "provable") for f in findings), findings[:3]
        else:
            assert not findings and all(c["passed"] for c in report["checks"]), report["checks"]
        chosen = report["selection"].get("suite", {})
        total = FILES * PER_FILE + PER_FILE
        ran = chosen.get("ran", total) + (total - chosen.get("recorded", total))
        return {"stop_s": stop_s, "probe_s": probe_s, "runs": report["check_runs"], "share": ran / total,
                "walled": report["walled"]["walled"], "split": report["split"],
                "uncollected": chosen.get("uncollected", 0)}
    finally:
        shutil.rmtree(root.parent, ignore_errors=True)


def suite_run(tree: Path, suite: str) -> float:
    started = time.perf_counter()
    subprocess.run(suite, shell=True, cwd=tree, capture_output=True, check=True)
    return time.perf_counter() - started


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--whole", action="store_true", help="also each Stop without the record, interleaved")
    parser.add_argument("--runner", choices=sorted(SUITES), default="pytest", help="the suite's runner")
    args = parser.parse_args()
    command = SUITES[args.runner]
    os.environ.setdefault("VACANT_HOME", tempfile.mkdtemp(prefix="vacant-bench-home-"))
    tree = Path(tempfile.mkdtemp(prefix="vacant-bench-suite-")) / "suite"
    generate(tree, args.runner)
    ways = [("selected", True)] + ([("whole", False)] if args.whole else [])
    suites: list[float] = []
    rows: dict[tuple[str, str], list[dict]] = {}
    try:
        for _ in range(args.reps):
            suites.append(suite_run(tree, command))
            for case in ("a", "b"):
                for name, recorded in ways:
                    rows.setdefault((case, name), []).append(stop(tree, case, recorded, command))
    finally:
        shutil.rmtree(tree.parent, ignore_errors=True)
    suite = statistics.median(suites)
    print(f"suite ({args.runner}): {FILES * PER_FILE + PER_FILE} tests in {FILES + 1} files, one full run {suite:.2f} s (median)")
    print(f"{'case':>34}{'stop':>10}{'stop s (med)':>14}{'stop s (p95)':>14}{'ratio':>8}{'check runs':>12}"
          f"{'selected':>10}{'walled':>8}")
    for (case, name), got in rows.items():
        stops = [r["stop_s"] for r in got]
        label = "(a) one module, 50 tests broken" if case == "a" else "(b) the shared module changed"
        print(f"{label:>34}{name:>10}{statistics.median(stops):>14.2f}{p95(stops):>14.2f}"
              f"{statistics.median(stops) / suite:>7.2f}x{max(r['runs'] for r in got):>12}"
              f"{max(r['share'] for r in got):>9.0%}{str(all(r['walled'] for r in got)):>8}")
        parts = got[len(got) // 2]["split"]
        print(f"{'':>34}  split: " + ", ".join(f"{part} {value['seconds']:.1f} s ({value['check_runs']})"
                                               for part, value in parts.items())
              + f"; test files not collected: {got[len(got) // 2]['uncollected']} of {FILES + 1}")
    probes = [r["probe_s"] for got in rows.values() for r in got if r["probe_s"] is not None]
    print(f"baseline probe (records each test's inputs; in the background, not timed above): "
          f"{statistics.median(probes):.2f} s median, p95 {p95(probes):.2f} s, {statistics.median(probes) / suite:.2f}x a full run")


if __name__ == "__main__":
    main()
