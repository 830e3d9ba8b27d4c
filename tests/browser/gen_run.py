"""A large generated run written straight through the step log and the object store (the recorder
would take minutes for 1,000 steps on a shared machine): steps in several lanes (main, sub-agents,
out-of-band), reads, file changes with real blobs, and a Stop report with one finding on a step in
the middle, so the view has to open a collapsed range to show it."""

from __future__ import annotations

import json
from pathlib import Path

from vacant.core.locations import ensure_state_dir, run_dir
from vacant.store.objects import ObjectStore
from vacant.store.states import save_manifest
from vacant.store.steplog import StepLog


def entry(store: ObjectStore, text: str) -> list:
    data = text.encode()
    return ["f", len(data), 1_700_000_000_000_000_000, store.put_bytes(data), 0o644]


def generate(root: Path, steps: int = 1000, run_id: str = "gen-1000", finding_step: int = 790) -> Path:
    state = ensure_state_dir(root)
    store = ObjectStore(state / "objects")
    log = StepLog(run_dir(root, run_id))
    log.run_dir.mkdir(parents=True, exist_ok=True)
    files = {f"src/mod{i}.py": [f"line {j} of module {i}" for j in range(30)] for i in range(40)}
    baseline = {rel: entry(store, "\n".join(lines) + "\n") for rel, lines in files.items()}
    log.emit("run_start", run=run_id, platform="claude-code", workspace=str(root), source="startup",
             baseline=save_manifest(store, baseline), session=run_id)
    lanes = [None, "agent-a1", "agent-b2", "agent-c3"]
    for agent in lanes[1:]:
        log.emit("subagent", agent_id=agent, agent_type="general-purpose", phase="start")
    for number in range(1, steps + 1):
        agent = lanes[number % 4] if number % 10 else None
        oob = number % 97 == 0
        tool = "oob" if oob else ("Read" if number % 3 == 0 else "Bash" if number % 7 == 0 else "Edit")
        rel = f"src/mod{number % 40}.py"
        actor = None if oob else {"platform": "claude-code", "agent_definition": "general-purpose" if agent else "main",
                                  "model": "claude-opus-4-8", "task_family": "general"}
        log.emit("step_start", step=number, key=f"k{number}", tool=tool, input={"file_path": str(root / rel)},
                 actor=actor, open_steps=[], scope=[rel], agent_id=None if oob else agent)
        if tool == "Read":
            log.emit("read", origin="file", ref=rel, object=baseline[rel][3], step=number, size=baseline[rel][1])
        else:
            lines = files[rel]
            at = number % len(lines)
            lines[at] = f"RATE = {number / 1000}" if number == finding_step else f"edited by step {number}"
            log.emit("change", step=number, scope=[rel], open_steps=[number], added={}, removed=[],
                     changed={rel: entry(store, "\n".join(lines) + "\n")})
        log.emit("step_end", step=number, key=f"k{number}", outcome="ok")
    rel = f"src/mod{finding_step % 40}.py"
    line = finding_step % 30 + 1
    finding = {"id": "0123456789ab", "source": "check", "name": "rate", "path": rel, "line": line,
               "message": f"RATE is {finding_step / 1000}, expected 0.08", "text": f"RATE = {finding_step / 1000}",
               "level": "provable", "final_level": None, "step": finding_step, "flip_step": finding_step,
               "tool": "Edit", "agent_id": None, "actor": {"platform": "claude-code", "agent_definition": "main",
                                                         "model": "claude-opus-4-8", "task_family": "general"},
               "lineage_source": None, "origin_source": None,
               "evidence": {"rerun": f"vacant replay {run_id}", "method": "bisection"}, "blocking": True}
    report = {"run": run_id, "stop": 1, "agent_id": None, "read_coverage": {"state": "complete", "why": "generated"},
              "checks": [{"name": "rate", "passed": False, "exit_code": 1, "seconds": 0.1, "timed_out": False}],
              "findings": [finding], "check_runs": 11, "states": steps, "budget_s": 300, "seconds": 1.0,
              "nothing_to_verify": False, "round": 1, "rounds": 3, "decision": "block"}
    (log.run_dir / "reports").mkdir(exist_ok=True)
    (log.run_dir / "reports" / "0001.json").write_text(json.dumps(report))
    (log.run_dir / "report.json").write_text(json.dumps(report))
    return log.run_dir
