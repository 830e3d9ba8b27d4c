"""A real project's own test suite as the `[[guard]]`, on the real `claude` and `codex` binaries
(issue 21): one run per agent (tests/e2e/suite_scenario.py) breaks three of more-itertools' tests
-- by the agent's file tool, by a shell `sed`, and one while a collection error hid its module --
then gets the Stop's feedback and fixes all three in round 2. The first Stop must blame each test
on the step the script broke it in (the masked one `heuristic`, naming the step that broke it and
the one that let it show), name the source file that step changed in the feedback the model got,
and the second Stop must be green."""

from __future__ import annotations

import html
import json
import re
import shutil

import pytest
from claude_harness import FakeUpstream, run_claude_p, tool, turn
from codex_harness import FakeResponses, make_codex_workspace, patch, run_codex_exec, shell
from codex_harness import turn as codex_turn
from suite_scenario import (
    CONTRACT,
    FIRST_TRUE,
    FIX_ALL,
    MASK_OFF,
    MASK_ON,
    MORE,
    QUANTIFY,
    RECIPES,
    REVERSIBLE,
    Break,
    Expected,
    assert_feedback,
    assert_findings,
    sed,
)
from vacant_run import make_workspace

from vacant.core.locations import state_dir

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
FEEDBACK_HEAD = "finding(s) must be fixed before you stop"
HOOK_PROMPT = re.compile(r"<hook_prompt hook_run_id=\"[^\"]*\">(.*?)</hook_prompt>", re.DOTALL)


def reports(workspace) -> list[dict]:
    [run_dir] = [p for p in (state_dir(workspace) / "runs").iterdir() if p.is_dir()]
    return [json.loads(path.read_text()) for path in sorted((run_dir / "reports").glob("*.json"))]


def strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def delivered_feedback(requests: list[dict]) -> list[str]:
    """The Stop feedback texts the model received, in order, once each (Codex XML-escapes them in a
    `<hook_prompt>`; Claude Code passes them as they are)."""
    found: list[str] = []
    for request in requests:
        for text in strings(request.get("body")):
            for part in [html.unescape(m) for m in HOOK_PROMPT.findall(text)] or [text]:
                if FEEDBACK_HEAD in part:
                    part = part[part.index("vacant: "):]
                    if part not in found:
                        found.append(part)
    return found


def assert_outcome(workspace, requests: list[dict], expected: list[Expected]) -> None:
    first, *rest = reports(workspace)
    assert first["decision"] == "block" and [c["kind"] for c in first["checks"]] == ["guard"], first["checks"]
    assert_findings(first, expected)
    [feedback] = delivered_feedback(requests)
    assert_feedback(feedback, expected)
    assert [(r["decision"], r["findings"]) for r in rest] == [("stop", [])], rest
    for brk in (QUANTIFY, FIRST_TRUE, REVERSIBLE):  # the round-2 fix is in the workspace
        assert brk.good in (workspace / brk.path).read_text()
    print(f"\nStop 1: {first['seconds']:.1f} s, {first['check_runs']} check runs over {first['states']} states; "
          f"Stop 2: {rest[0]['seconds']:.1f} s, {rest[0]['check_runs']} check runs")


def own_rootdir(workspace) -> None:
    """The project's own pytest configuration (empty), as a project that runs pytest has: the checks
    run at the workspace's own path, and a workspace inside this repository (.e2e-tmp) would
    otherwise get this repository's pyproject.toml as pytest's rootdir, addopts and all."""
    (workspace / "pytest.ini").write_text("[pytest]\n")


def edit(brk: Break, root) -> dict:
    return tool("Edit", file_path=str(root / brk.path), old_string=brk.good, new_string=brk.bad)


def test_the_suite_guard_on_claude(tmp_path, monkeypatch, suite_tree):
    monkeypatch.setenv("VACANT_HOME", str(tmp_path / "vacant-data"))
    workspace, home = make_workspace(tmp_path)
    shutil.copytree(suite_tree, workspace, dirs_exist_ok=True)
    own_rootdir(workspace)
    (workspace / "vacant.toml").write_text(CONTRACT)
    turns = [
        turn(tool("Read", file_path=str(workspace / RECIPES))),  # step 1
        turn(edit(QUANTIFY, workspace)),  # step 2: a regression by Edit
        turn(tool("Bash", command=sed(FIRST_TRUE.path, FIRST_TRUE.good, FIRST_TRUE.bad))),  # step 3: by sed
        turn(tool("Bash", command=MASK_ON)),  # step 4: tests/test_more.py no longer collects
        turn(tool("Read", file_path=str(workspace / MORE))),  # step 5
        turn(edit(REVERSIBLE, workspace)),  # step 6: breaks a test no run can see yet
        turn(tool("Bash", command=MASK_OFF)),  # step 7: lets it show
        turn({"type": "text", "text": "Done."}),  # Stop 1 blocks
        turn(tool("Bash", command=FIX_ALL), match=f"which changed {MORE}"),  # step 8, after the feedback
        turn({"type": "text", "text": "Fixed."}),  # Stop 2
    ]
    with FakeUpstream({"turns": turns}, tmp_path / "upstream") as upstream:
        proc = run_claude_p(workspace, home, upstream, "tidy the recipes", timeout=900)
        requests = upstream.requests()
    assert proc.returncode == 0, proc.stderr
    assert_outcome(workspace, requests, [
        Expected(QUANTIFY, step=2, tool="Edit", level="provable", flip_step=2),
        Expected(FIRST_TRUE, step=3, tool="Bash", level="provable", flip_step=3),
        Expected(REVERSIBLE, step=6, tool="Edit", level="heuristic", flip_step=7, unmasked_by=7),
    ])


def test_the_suite_guard_on_codex(scratch, monkeypatch, suite_tree):
    monkeypatch.setenv("VACANT_HOME", str(scratch.vacant_home))
    workspace = make_codex_workspace(scratch)
    shutil.copytree(suite_tree, workspace, dirs_exist_ok=True)
    own_rootdir(workspace)
    (workspace / "vacant.toml").write_text(CONTRACT)
    turns = [
        codex_turn(patch(f"*** Begin Patch\n*** Update File: {RECIPES}\n@@\n-{QUANTIFY.good}\n+{QUANTIFY.bad}\n"
                         "*** End Patch\n")),  # step 1: a regression by apply_patch
        codex_turn(shell(sed(FIRST_TRUE.path, FIRST_TRUE.good, FIRST_TRUE.bad))),  # step 2: by sed
        codex_turn(shell(MASK_ON)),  # step 3: tests/test_more.py no longer collects
        codex_turn(patch(f"*** Begin Patch\n*** Update File: {MORE}\n@@\n-        {REVERSIBLE.good}\n"
                         f"+        {REVERSIBLE.bad}\n*** End Patch\n")),  # step 4: unseen break
        codex_turn(shell(MASK_OFF)),  # step 5: lets it show
        codex_turn({"type": "text", "text": "Done."}),  # Stop 1 blocks
        codex_turn(shell(FIX_ALL), match=f"which changed {MORE}"),  # step 6, after the feedback
        codex_turn({"type": "text", "text": "Fixed."}),  # Stop 2
    ]
    with FakeResponses({"turns": turns}, scratch.path / "upstream") as upstream:
        proc = run_codex_exec(workspace, scratch.codex_home, upstream, "tidy the recipes", home=scratch.home,
                              vacant_home=scratch.vacant_home, timeout=900)
        requests = upstream.requests()
    assert proc.returncode == 0, proc.stderr
    assert "hook: Stop Failed" not in proc.stderr, proc.stderr
    assert_outcome(workspace, requests, [
        Expected(QUANTIFY, step=1, tool="apply_patch", level="provable", flip_step=1),
        Expected(FIRST_TRUE, step=2, tool="Bash", level="provable", flip_step=2),
        Expected(REVERSIBLE, step=4, tool="apply_patch", level="heuristic", flip_step=5, unmasked_by=5),
    ])
