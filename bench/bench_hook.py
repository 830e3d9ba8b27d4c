"""Hook latency per event type, whole process, against a bare interpreter in the same run.

    python bench/bench_hook.py [--tree DIR] [--reps 30] [--tally]

Each sample spawns the installed hook command (`python -I -S …/vacant-hook-client.py claude`) with a
real-shaped payload on stdin, exactly as Claude Code does, and times it to exit. The reference is `python -I -S -c pass` with the same
interpreter. On a small workspace the goal is p95 <= 10 ms above the reference for Read/Write/Edit;
on the 40k-file tree (bench/gen_tree.py) a Bash step's full scan should stay p95 <= 450 ms and
Read/Write/Edit must not grow with the workspace. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from vacant.core.locations import mark_installed, state_dir
from vacant.platforms.settings_file import hook_command

PYTHON = sys.executable
HOOK = shlex.split(hook_command("claude"))  # exactly what `vacant init` installs


def timed(cmd: list[str], payload: bytes | None, env: dict, cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, input=payload, env=env, cwd=cwd, stdout=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - started) * 1000


def stats(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def payload(workspace: Path, event: str, tool: str, key: str, **extra) -> bytes:
    body = {"session_id": "bench", "transcript_path": "/nonexistent.jsonl", "cwd": str(workspace),
            "hook_event_name": event, "tool_name": tool, "tool_use_id": key, **extra}
    return json.dumps(body).encode()


def tool_inputs(workspace: Path, n: int) -> dict[str, dict]:
    target = str(workspace / "bench_target.txt")
    return {
        "Read": {"tool_input": {"file_path": target},
                 "tool_response": {"type": "text", "file": {"filePath": target, "content": "x\n"}}},
        "Write": {"tool_input": {"file_path": target, "content": f"write {n}\n"}},
        "Edit": {"tool_input": {"file_path": target, "old_string": "x", "new_string": "y"}},
        "Bash": {"tool_input": {"command": "true"},
                 "tool_response": {"stdout": "", "stderr": "", "interrupted": False}},
    }


def measure(workspace: Path, reps: int, *others: tuple[str, Path]) -> dict[str, list[float]]:
    """Each event's samples; `others`: (label, workspace) measured interleaved with it, rep by rep
    (their rows carry the label), so that a noisy machine moves every row alike."""
    places = [("", workspace), *others]
    for _label, place in places:
        (place / "bench_target.txt").write_text("x\n")
        subprocess.run(HOOK, input=json.dumps({"session_id": "bench", "cwd": str(place),
                                               "hook_event_name": "SessionStart", "source": "startup"}).encode(),
                       env=dict(os.environ, CLAUDE_PROJECT_DIR=str(place)), cwd=place, check=True)
    samples: dict[str, list[float]] = {"reference": []}
    for n in range(reps):
        samples["reference"].append(timed([PYTHON, "-I", "-S", "-c", "pass"], None, dict(os.environ), workspace))
        for label, place in places:
            env = dict(os.environ, CLAUDE_PROJECT_DIR=str(place))
            for tool, fields in tool_inputs(place, n).items():
                key = f"{tool}-{n}"
                pre = {k: v for k, v in fields.items() if k != "tool_response"}
                samples.setdefault(f"{label}PreToolUse:{tool}", []).append(
                    timed(HOOK, payload(place, "PreToolUse", tool, key, **pre), env, place))
                if tool == "Write":
                    (place / "bench_target.txt").write_text(f"write {n}\n")
                samples.setdefault(f"{label}PostToolUse:{tool}", []).append(
                    timed(HOOK, payload(place, "PostToolUse", tool, key, **fields), env, place))
    return samples


def in_process(root: Path, rounds: int = 2000) -> None:
    """The tally's own cost per call, in this process (what a whole-process sample cannot resolve on
    a noisy machine): the check and the sealing of run.json that a call adds, against reading the
    install record, which every call already does, timed alternately in the same run."""
    from vacant.core.locations import read_install
    from vacant.record.losswatch import LossWatch

    state = state_dir(root)
    record = read_install(root, state)
    run = {"started": True, "next_step": 7, "open": {}, "closed": {f"t{n}": n for n in range(6)}, "agents": {}}

    def tally_work() -> None:
        watch = LossWatch(root, state, record)
        watch.check("bench", None)
        watch.run_bytes(run)

    samples: dict[str, list[float]] = {"read_install (reference)": [], "tally check + seal": []}
    for _ in range(rounds):
        for name, work in (("read_install (reference)", lambda: read_install(root, state)), ("tally check + seal", tally_work)):
            started = time.perf_counter()
            work()
            samples[name].append((time.perf_counter() - started) * 1e6)
    reference = statistics.median(samples["read_install (reference)"])
    print(f"\nin-process, per call ({rounds} rounds, alternating)")
    print(f"{'work':<28}{'median us':>11}{'p95 us':>9}{'ratio':>8}")
    for name, values in samples.items():
        median, p95 = stats(values)
        print(f"{name:<28}{median:>11.1f}{p95:>9.1f}{median / reference:>8.2f}")


def with_tally(reps: int) -> None:
    """The record's tally (vacant/core/tally.py) checked at every call, against the same workspace
    without it (an install from before the tally: nothing checked), interleaved in one run. A key
    of the bench's own (XDG_CONFIG_HOME in a temporary directory): the person's is never used."""
    from vacant.core import tally
    from vacant.core.keys import create_user_key

    base = Path(tempfile.mkdtemp(prefix="vacant-bench-tally-"))
    os.environ["XDG_CONFIG_HOME"] = str(base / "config")
    try:
        create_user_key()
        plain, tallied = base / "plain", base / "tallied"
        for place in (plain, tallied):
            place.mkdir()
            for i in range(20):
                (place / f"f{i}.txt").write_text("small file\n" * i)
            mark_installed(place)
        tally.accept(tallied)
        in_process(tallied)
        report(f"small workspace without and with the record's tally (t: rows), interleaved ({reps} reps)",
               measure(plain, reps, ("t:", tallied)))
        for place in (plain, tallied):
            refuse_failed_open(state_dir(place))
    finally:
        shutil.rmtree(base, ignore_errors=True)


def report(title: str, samples: dict[str, list[float]]) -> None:
    ref_median, ref_p95 = stats(samples["reference"])
    print(f"\n{title}")
    print(f"{'event':<22}{'median ms':>11}{'p95 ms':>9}{'p95 - ref':>11}")
    print(f"{'python -I -S -c pass':<22}{ref_median:>11.1f}{ref_p95:>9.1f}{'':>11}")
    for name, values in samples.items():
        if name == "reference":
            continue
        median, p95 = stats(values)
        print(f"{name:<22}{median:>11.1f}{p95:>9.1f}{p95 - ref_p95:>+11.1f}")


def refuse_failed_open(state: Path) -> None:
    """A hook that failed open is fast and worthless: say so instead of printing its time."""
    errors = state / "errors.log"
    if errors.exists():
        raise SystemExit(f"the hook failed (it fails open, so the figures above are void):\n{errors.read_text()[:2000]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tree", type=Path, help="a large tree (bench/gen_tree.py) to measure on as well")
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--tally", action="store_true", help="only the record's tally: without and with it, interleaved")
    args = parser.parse_args()
    if args.tally:
        with_tally(args.reps)
        return
    tree = args.tree.resolve() if args.tree else None
    small = Path(tempfile.mkdtemp(prefix="vacant-bench-small-"))
    try:
        for i in range(20):
            (small / f"f{i}.txt").write_text("small file\n" * i)
        mark_installed(small)  # hooks record only in an installed workspace
        report(f"small workspace ({args.reps} reps)", measure(small, args.reps))
        refuse_failed_open(state_dir(small))
    finally:
        shutil.rmtree(small, ignore_errors=True)
    if tree:
        state = Path(tempfile.mkdtemp(prefix="vacant-bench-state-"))
        os.environ["VACANT_STATE_DIR"] = str(state)  # keep the tree itself untouched
        mark_installed(tree)
        try:
            report(f"large tree {tree} ({max(5, args.reps // 3)} reps)", measure(tree, max(5, args.reps // 3)))
            refuse_failed_open(state)
        finally:
            (tree / "bench_target.txt").unlink(missing_ok=True)
            shutil.rmtree(state, ignore_errors=True)


if __name__ == "__main__":
    main()
