"""Preregistration: the plan is written and hashed before the first run, and never changes after.

`OUT/plan.json` holds the plan (tasks with their content hashes, arms, repeats, rounds, agent,
model, agent arguments, the cell order's seed, the primary outcome and the analysis) and its
SHA-256 over the canonical JSON (sorted keys, no spaces). Every result line and every summary cites
that hash. Starting again with the same OUT:
- the same plan: resumed;
- a different plan and no cell started yet: the new plan replaces it (nothing was run under it);
- a different plan after the first cell started: refused (PlanChanged names what differs), and
  so is a plan.json whose stored hash no longer matches its own content (edited by hand).
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from typing import Any

from vacant import __version__
from vacant.core.atomic import atomic_write
from vacant.experiment.arms import ARMS, PROMPT_SUFFIX
from vacant.experiment.tasks import Task

PLAN_FILE = "plan.json"
FORMAT = 1
PRIMARY_OUTCOME = ("success = accepted (every check of the task's vacant.toml passes on the final workspace) "
                   "AND hidden pass (every held-back check of hidden/checks.toml passes on it)")
ANALYSIS = ("per arm and task family: n, successes, rate with a Wilson 95% interval; RL-RF and RL-RS success "
            "differences paired by (task, repeat) with Newcombe's hybrid score 95% interval (paired); "
            "agent runs, seconds and tokens per arm as means")


class PlanChanged(RuntimeError):
    """The plan differs from the one preregistered before the first run (one sentence, what differs)."""


def canonical(plan: dict[str, Any]) -> bytes:
    return json.dumps(plan, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def plan_hash(plan: dict[str, Any]) -> str:
    return hashlib.sha256(canonical(plan)).hexdigest()


def make_plan(tasks: list[Task], arms: list[str], repeats: int, rounds: int, agent: str, model: str | None,
              agent_args: list[str], seed: int, timeout_s: float) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "vacant": __version__,
        "tasks": [{"name": t.name, "family": t.family, "hash": t.hash} for t in tasks],
        "arms": {name: ARMS[name].feedback for name in arms},
        "repeats": repeats,
        "rounds": rounds,
        "agent": agent,
        "model": model,
        "agent_args": list(agent_args),
        "prompt_suffix": PROMPT_SUFFIX,
        "seed": seed,
        "cell_timeout_s": timeout_s,
        "primary_outcome": PRIMARY_OUTCOME,
        "analysis": ANALYSIS,
    }


def cells(plan: dict[str, Any]) -> list[tuple[str, str, int]]:
    """Every (task, arm, repeat), in the preregistered order: repeat by repeat, tasks shuffled and
    arms shuffled within each task by the plan's seed (no arm runs all at once, late or early)."""
    rng = random.Random(plan["seed"])
    order: list[tuple[str, str, int]] = []
    for repeat in range(1, plan["repeats"] + 1):
        tasks = [t["name"] for t in plan["tasks"]]
        rng.shuffle(tasks)
        for task in tasks:
            arms = sorted(plan["arms"])
            rng.shuffle(arms)
            order += [(task, arm, repeat) for arm in arms]
    return order


def differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    keys = sorted(set(old) | set(new))
    out = [k for k in keys if k != "tasks" and old.get(k) != new.get(k)]
    before = {t["name"]: t for t in old.get("tasks", [])}
    after = {t["name"]: t for t in new.get("tasks", [])}
    out += [f"task {n}" for n in sorted(set(before) | set(after)) if before.get(n) != after.get(n)]
    return out


def register(out: Path, plan: dict[str, Any], started: bool) -> str:
    """Write the plan (or find it already there) and return its hash; see the module docstring."""
    path = Path(out) / PLAN_FILE
    new_hash = plan_hash(plan)
    if path.exists():
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
            old, old_hash = stored["plan"], stored["sha256"]
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise PlanChanged(f"{path} is unreadable ({error}); it is the preregistration: restore it, "
                              "or start a new experiment with another --out") from None
        if plan_hash(old) != old_hash:
            raise PlanChanged(f"{path} was edited after it was written (its hash no longer matches)")
        if old_hash == new_hash:
            return old_hash
        if started:
            changed = ", ".join(differences(old, plan)) or "its content"
            raise PlanChanged(f"the plan changed after the first run ({changed}); a preregistered plan is not "
                              f"changed: run it as registered, or start a new experiment with another --out")
    body = {"sha256": new_hash, "plan": plan}
    atomic_write(path, (json.dumps(body, indent=1, sort_keys=True) + "\n").encode())
    return new_hash
