"""Step-log append benchmark: many hook processes appending to one run's log at once.

    python bench/bench_append.py [--procs 50] [--records 200] [--rounds 3] [--single 1000]

Each round starts --procs writer processes (separate interpreters, like hooks); once all have
imported vacant they are released together and each emits --records `step_start` events through
`StepLog.emit` (validate, redact, lock, chain, one O_APPEND write, head update), timing every
append with time.perf_counter. Printed per round: total wall time from release to the last
writer's finish, amortised time per append (total / records), per-append latency median / p95 /
max as measured inside the writers (it includes waiting for the lock), records read back, "lost"
(records whose writer/index pair is absent), duplicates, and the number of `verify` problems.
A single uncontended writer (--single appends) gives the cost of one append without waiting.
This script prints figures; it never asserts a time.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def writer(run_dir: Path, writer_id: int, count: int, gate: Path, out: Path) -> None:
    from vacant.store.steplog import StepLog

    log = StepLog(run_dir)
    (gate.parent / f"ready-{writer_id}").touch()
    while not gate.exists():
        time.sleep(0.0005)
    started = time.time()
    latencies = []
    for index in range(count):
        t0 = time.perf_counter()
        log.emit(
            "step_start",
            step=f"s{writer_id}-{index}",
            key=f"w{writer_id}-{index}",
            tool="Bash",
            input={"command": f"pytest -q tests/test_{index % 17}.py -k case_{writer_id}", "timeout": 120000},
            actor="main",
            open_steps=[f"s{writer_id}-{index - 1}"] if index else [],
        )
        latencies.append(time.perf_counter() - t0)
    out.write_text(json.dumps({"start": started, "end": time.time(), "latencies": latencies}))


def run_round(procs: int, records: int, workdir: Path) -> dict:
    from vacant.store.steplog import StepLog, verify

    workdir.mkdir(parents=True)
    run_dir = workdir / "runs" / "bench-run"
    gate = workdir / "go"
    children = [
        subprocess.Popen([sys.executable, __file__, "--writer", str(run_dir), str(i), str(records),
                          str(gate), str(workdir / f"times-{i}.json")])
        for i in range(procs)
    ]
    while sum(1 for _ in workdir.glob("ready-*")) < procs:
        if any(child.poll() not in (None, 0) for child in children):
            raise RuntimeError("a writer failed to start")
        time.sleep(0.005)
    released = time.time()
    gate.touch()
    failed = sum(1 for child in children if child.wait() != 0)
    finished = time.time()
    results = [json.loads((workdir / f"times-{i}.json").read_text()) for i in range(procs) if (workdir / f"times-{i}.json").exists()]
    latencies = [value for result in results for value in result["latencies"]]
    last_end = max((result["end"] for result in results), default=finished)
    log = StepLog(run_dir)
    found = log.records()
    keys = [record.get("key") for record in found]
    expected = {f"w{i}-{j}" for i in range(procs) for j in range(records)}
    problems = verify(log)
    total = last_end - released
    return {
        "procs": procs,
        "records_each": records,
        "writers_failed": failed,
        "total_s": total,
        "amortised_ms": total / (procs * records) * 1000,
        "median_ms": statistics.median(latencies) * 1000 if latencies else None,
        "p95_ms": p95(latencies) * 1000 if latencies else None,
        "max_ms": max(latencies) * 1000 if latencies else None,
        "records": len(found),
        "lost": len(expected - set(keys)),
        "duplicates": len(keys) - len(set(keys)),
        "verify_problems": len(problems),
        "problem_kinds": sorted({problem.kind for problem in problems}),
        "log_bytes": log.path.stat().st_size if log.path.exists() else 0,
    }


def single(count: int, workdir: Path) -> dict:
    workdir.mkdir(parents=True)
    out = workdir / "times.json"
    gate = workdir / "go"
    gate.touch()
    subprocess.run([sys.executable, __file__, "--writer", str(workdir / "runs" / "solo"), "0", str(count),
                    str(gate), str(out)], check=True)
    latencies = json.loads(out.read_text())["latencies"]
    return {"n": len(latencies), "median_ms": statistics.median(latencies) * 1000,
            "p95_ms": p95(latencies) * 1000, "max_ms": max(latencies) * 1000,
            "min_ms": min(latencies) * 1000}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--writer":
        run_dir, writer_id, count, gate, out = argv[1:6]
        writer(Path(run_dir), int(writer_id), int(count), Path(gate), Path(out))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--procs", type=int, default=50)
    parser.add_argument("--records", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--single", type=int, default=1000, help="appends by one uncontended writer (0: skip)")
    parser.add_argument("--workdir", type=Path, default=HERE / "out")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    base = Path(tempfile.mkdtemp(prefix="vacant-bench-append-", dir=args.workdir))
    try:
        solo = single(args.single, base / "single") if args.single else None
        rounds = []
        for number in range(args.rounds):
            print(f"... round {number + 1}/{args.rounds}: {args.procs} processes x {args.records} records",
                  file=sys.stderr, flush=True)
            rounds.append(run_round(args.procs, args.records, base / f"round-{number}"))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"\n{os.cpu_count()} CPUs; times in ms unless marked; p95 = nearest rank")
    if solo:
        print(f"single writer, {solo['n']} appends: median {solo['median_ms']:.3f}  p95 {solo['p95_ms']:.3f}  "
              f"min {solo['min_ms']:.3f}  max {solo['max_ms']:.3f}")
    print(f"{args.procs} processes x {args.records} records, per round:")
    header = (f"{'round':>5} {'total s':>8} {'ms/append':>9} {'median':>8} {'p95':>8} {'max':>8} "
              f"{'records':>7} {'lost':>5} {'dup':>4} {'verify':>6}")
    print(header)
    for number, row in enumerate(rounds, 1):
        print(f"{number:>5} {row['total_s']:8.2f} {row['amortised_ms']:9.3f} {row['median_ms']:8.2f} {row['p95_ms']:8.2f} "
              f"{row['max_ms']:8.1f} {row['records']:>7} {row['lost']:>5} {row['duplicates']:>4} {row['verify_problems']:>6}"
              + (f"  ({', '.join(row['problem_kinds'])})" if row["problem_kinds"] else "")
              + (f"  {row['writers_failed']} writers FAILED" if row["writers_failed"] else ""))
    for number, row in enumerate(rounds, 1):
        print(f"round {number}: lost: {row['lost']}, duplicates: {row['duplicates']}, records: {row['records']}, "
              f"verify problems: {row['verify_problems']}")
    if args.json:
        args.json.write_text(json.dumps({"single": solo, "rounds": rounds}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
