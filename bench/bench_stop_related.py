"""Stop cost with jest's and vitest's related-tests selection (vacant/attribute/relatedtests.py): a
generated suite of 200 tests in 20 files, each file importing one module of its own, as a ratio
to one full suite run measured in the same run.

    python bench/bench_stop_related.py [--reps 1] [--runners jest vitest]

The runners are the pinned jest and vitest of fixtures/runners (`npm ci` there first, as the tests
do). Each rep, for each runner: one full suite run; then a run through the real recorder (one step
breaks lib/m7.js, its 10 tests fail; three steps write notes), the baseline probe (not timed: in a
session it runs in the background after the run starts) and the real Stop, walled where
bubblewrap runs, with the record and without it (the whole suite, as before), interleaved. Every
finding must be graded `provable` on the breaking step. Prints figures; asserts the answers.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from bench_stop_selection import record_run

from vacant.attribute import baseline_probe, relatedtests
from vacant.attribute.stop import Pipeline
from vacant.core.locations import mark_installed
from vacant.policy.contract.contract import load_contract

FILES, PER_FILE, BROKEN = 20, 10, 7
BIN = Path(__file__).resolve().parents[1] / "fixtures" / "runners" / "node_modules" / ".bin"
COMMANDS = {"jest": f"{BIN / 'jest'} --ci --watchman=false", "vitest": f"{BIN / 'vitest'} run"}


def module(kind: str, value: int) -> str:
    return f"export const VALUE = {value};\n" if kind == "vitest" else f"exports.VALUE = {value};\n"


def generate(root: Path, kind: str) -> None:
    (root / "lib").mkdir(parents=True)
    (root / "test").mkdir()
    esm = kind == "vitest"
    (root / "package.json").write_text('{"name": "w", "private": true' + (', "type": "module"' if esm else "") + "}\n")
    for n in range(FILES):
        (root / "lib" / f"m{n}.js").write_text(module(kind, n))
        head = (f"import {{ test, expect }} from 'vitest';\nimport {{ VALUE }} from '../lib/m{n}.js';\n" if esm
                else f"const {{ VALUE }} = require('../lib/m{n}.js');\n")
        body = "".join(f"test('t{k}', () => {{ expect(VALUE + {k}).toBe({n + k}); }});\n" for k in range(PER_FILE))
        (root / "test" / f"f{n}.test.js").write_text(head + body)


def stop(tree: Path, kind: str, recorded: bool) -> dict:
    with tempfile.TemporaryDirectory(prefix="vacant-bench-related-") as scratch:
        root = Path(shutil.copytree(tree, Path(scratch) / "ws"))
        mark_installed(root)
        guard = f'[[guard]]\nname = "suite"\ncommand = "{COMMANDS[kind]}"\ntimeout = 600\n'
        (root / "vacant.toml").write_text(guard)
        run_dir = record_run(root, (f"lib/m{BROKEN}.js", module(kind, 100)))  # then three notes
        if recorded:
            baseline_probe.probe(root, run_dir)
            assert any((run_dir / relatedtests.RECORDS).iterdir()), "the probe recorded no tests"
        started = time.perf_counter()
        report = Pipeline(root, run_dir, load_contract(root), budget_s=3600).run()
        stop_s = time.perf_counter() - started
    findings = report["findings"]
    assert len(findings) == PER_FILE and all((f["step"], f["level"]) == (1, "provable") for f in findings), findings
    chosen = report["selection"].get("suite", {})
    return {"stop_s": stop_s, "runs": report["check_runs"], "ran": chosen.get("ran", FILES * PER_FILE),
            "walled": report["walled"]["walled"], "split": report["split"]}


def suite_run(tree: Path, kind: str) -> float:
    started = time.perf_counter()
    subprocess.run(COMMANDS[kind], shell=True, cwd=tree, capture_output=True, check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--runners", nargs="+", default=list(COMMANDS), choices=list(COMMANDS))
    args = parser.parse_args()
    os.environ.setdefault("VACANT_HOME", tempfile.mkdtemp(prefix="vacant-bench-home-"))
    for kind in args.runners:
        tree = Path(tempfile.mkdtemp(prefix="vacant-bench-suite-")) / "suite"
        generate(tree, kind)
        suites: list[float] = []
        rows: dict[str, list[dict]] = {"selected": [], "whole": []}
        try:
            for _ in range(args.reps):
                suites.append(suite_run(tree, kind))
                for name in rows:
                    rows[name].append(stop(tree, kind, name == "selected"))
        finally:
            shutil.rmtree(tree.parent, ignore_errors=True)
        suite = statistics.median(suites)
        print(f"{kind}: {FILES * PER_FILE} tests in {FILES} files, one full run {suite:.2f} s (median)")
        for name, got in rows.items():
            stops = statistics.median(r["stop_s"] for r in got)
            parts = got[len(got) // 2]["split"]
            print(f"  {name:>8} Stop {stops:7.2f} s  {stops / suite:5.2f}x one suite run  check runs "
                  f"{max(r['runs'] for r in got)}  tests run in the final run {got[0]['ran']}  walled "
                  f"{all(r['walled'] for r in got)}; split: "
                  + ", ".join(f"{part} {value['seconds']:.1f} s ({value['check_runs']})" for part, value in parts.items()))
        ratio = statistics.median(r["stop_s"] for r in rows["selected"]) / statistics.median(
            r["stop_s"] for r in rows["whole"])
        print(f"  selected Stop / whole Stop: {ratio:.2f}")


if __name__ == "__main__":
    main()
