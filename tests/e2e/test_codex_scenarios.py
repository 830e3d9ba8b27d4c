"""The planted-error suite on the real `codex` binary (fixtures/scenarios/codex/): the same ground
truths and the same assertions as on Claude Code (scenarios.assert_planted), with Codex's tools
(`apply_patch` patches, `exec_command` shell commands and reads). Codex hands a Stop block to the
model as a `<hook_prompt>` user message in the same turn, XML-escaped; the feedback must arrive
there byte for byte once unescaped.

Codex has no cap on Stop continuations, so vacant's round budget is the only brake: a scenario
whose upstream never fixes anything must end after exactly `rounds` blocks."""

from __future__ import annotations

import html
import re
import subprocess
import time

import pytest
from codex_harness import (
    CodexScratch,
    FakeResponses,
    codex_env,
    make_codex_workspace,
    run_codex_exec,
    session_id,
)
from scenarios import Outcome, assert_planted, load, names, seed
from vacant_run import vacant
from vacant.core.locations import state_dir

pytestmark = pytest.mark.e2e
FEEDBACK_MARKER = "<hook_prompt"
HOOK_PROMPT = re.compile(r"<hook_prompt hook_run_id=\"[^\"]*\">(.*?)</hook_prompt>", re.DOTALL)
RUN_TIMEOUT_S = 180  # one `codex exec`; a Stop loop that never ends fails here instead of hanging
CODEX_NAMES = names("codex")


def run_rounds(scratch: CodexScratch, scenario: dict, workspace,
               upstream: FakeResponses) -> list[subprocess.CompletedProcess]:
    """Each round is one `codex exec` (or `codex exec resume <id>`); a person's flag is filed
    between rounds with the agent's own HOME, so the signing key is the same."""
    env = codex_env(scratch.home, scratch.codex_home, scratch.vacant_home)
    session, processes = None, []
    for round_ in scenario["rounds"]:
        if "flag" in round_:
            vacant(["flag", *round_["flag"]], workspace, env=env)
        extra = ("resume", session) if round_.get("resume") else ()
        proc = run_codex_exec(workspace, scratch.codex_home, upstream, round_["prompt"], extra_args=extra,
                              home=scratch.home, vacant_home=scratch.vacant_home, timeout=RUN_TIMEOUT_S)
        assert proc.returncode == 0, proc.stderr
        assert "hook: Stop Failed" not in proc.stderr, proc.stderr
        session = session_id(proc)
        processes.append(proc)
    return processes


def run_scenario(scratch: CodexScratch, name: str, monkeypatch, scenario: dict | None = None
                 ) -> tuple[dict, Outcome, list[subprocess.CompletedProcess]]:
    monkeypatch.setenv("VACANT_HOME", str(scratch.vacant_home))
    workspace = make_codex_workspace(scratch)
    scenario = scenario or load(name, workspace, scratch.path / "memory")
    seed(workspace, scenario["files"])
    with FakeResponses({"turns": scenario["turns"]}, scratch.path / "upstream") as upstream:
        processes = run_rounds(scratch, scenario, workspace, upstream)
        requests = upstream.requests()
    errors = state_dir(workspace) / "errors.log"
    assert not errors.exists(), errors.read_text()
    env = codex_env(scratch.home, scratch.codex_home, scratch.vacant_home)
    return scenario, Outcome.read(workspace, requests, env), processes


def hook_prompts(request: dict) -> list[str]:
    """The unescaped `<hook_prompt>` texts in the user messages of one upstream request."""
    found = []
    for item in request["body"].get("input", []):
        if item.get("type") == "message" and item.get("role") == "user":
            for part in item.get("content", []):
                found += [html.unescape(m) for m in HOOK_PROMPT.findall(part.get("text", ""))]
    return found


def delivered(outcome: Outcome) -> list[tuple[int, list[str]]]:
    """(request number, hook prompts) for each request that carried a new hook prompt."""
    out, seen = [], 0
    for request in outcome.requests:
        prompts = hook_prompts(request)
        if len(prompts) > seen:
            out.append((request["n"], prompts[seen:]))
            seen = len(prompts)
    return out


@pytest.mark.parametrize("name", CODEX_NAMES)
def test_planted_error_on_codex(scratch, monkeypatch, name):
    scenario, outcome, _ = run_scenario(scratch, name, monkeypatch)
    expect = scenario["expect"]
    assert_planted(expect, outcome, FEEDBACK_MARKER)
    feedback = [r["text"] for r in outcome.log if r["type"] == "feedback"]
    # Each block reached the model once, in full (Codex XML-escapes it; unescaped it is the same).
    assert [prompts for _, prompts in delivered(outcome)] == [[text] for text in feedback]


def never_fixed(rounds: int | None) -> dict:
    """A patch plants a wrong value; afterwards the upstream only ever says `done.`."""
    stop = f"\n[stop]\nrounds = {rounds}\n" if rounds is not None else ""
    return {
        "files": {
            "vacant.toml": 'task_family = "config"\n' + stop
                           + '\n[[check]]\nname = "rate"\ncommand = "python3 check_value.py RATE config.py 0.08"\n',
            "check_value.py": "@check_value.py",
        },
        "rounds": [{"prompt": "set the rate in config.py"}],
        "turns": [{"items": [{"type": "custom", "name": "apply_patch",
                              "input": "*** Begin Patch\n*** Add File: config.py\n+RATE = 0.5\n*** End Patch\n"}]}],
    }


@pytest.mark.parametrize("rounds", [None, 1], ids=["default-3", "contract-1"])
def test_round_budget_is_the_only_brake(scratch, monkeypatch, rounds):
    budget = 3 if rounds is None else rounds
    started = time.monotonic()
    _, outcome, (process,) = run_scenario(scratch, "never_fixed", monkeypatch, never_fixed(rounds))
    elapsed = time.monotonic() - started

    blocks = [r for r in outcome.log if r["type"] == "feedback"]
    assert [(r["round"], r["rounds"]) for r in blocks] == [(n, budget) for n in range(1, budget + 1)]
    assert [r["decision"] for r in outcome.reports] == ["block"] * budget + ["stop"]
    assert all(len(r["findings"]) == 1 and r["findings"][0]["level"] == "provable" for r in outcome.reports)
    assert process.stderr.count("hook: Stop Blocked") == budget
    assert process.stderr.count("hook: Stop Completed") == 1  # the last Stop let the agent stop

    # the model got each round's feedback, once: the patch, the fallback `done.`, then one request
    # per block (each answered `done.` again), and nothing after the Stop that let it stop
    sent = delivered(outcome)
    assert [prompts for _, prompts in sent] == [[r["text"]] for r in blocks]
    assert [f"round {n} of {budget}" in prompts[0] for n, (_, prompts) in enumerate(sent, 1)] == [True] * budget
    assert [r["turn"] for r in outcome.requests] == [0] + [None] * (1 + budget)
    last = outcome.reports[-1]
    assert last["round"] == budget and last["findings"][0]["blocking"]

    # the wrong patch is scored once, however many rounds it survived
    cell = outcome.cell(agent_definition="main")
    assert cell is not None and cell["n"] == 1 and cell["mean"] == 0
    print(f"\nround budget {budget}: {len(blocks)} blocks, {len(outcome.reports)} Stops, "
          f"{len(outcome.requests)} upstream requests, codex exec rc {process.returncode}, {elapsed:.1f} s")
