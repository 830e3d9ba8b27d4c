"""The wall and the gate agree (issue 41): a line a platform's sandbox runs outside the wall (Claude
Code's `sandbox.excludedCommands`, which `vacant init` writes from UNWALLED_COMMANDS) never runs
without the person's answer. Claude runs a line whole outside its sandbox when any of its commands
starts with an excluded one (measured on 2.1.197: `git push … && cat FILE`, and `git push` with
`cat FILE` on the next line, read a denied file), so the lines generated here put an excluded
command, in any spacing and after any assignments, at the start of one command of a compound line,
with anything after it: the gate holds every one, even with the shipped push rule removed."""

from __future__ import annotations

import subprocess

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from vacant.core.calls import HookCall
from vacant.core.wall import UNWALLED_COMMANDS, outside_the_wall
from vacant.platforms.claude import Claude
from vacant.policy.gate import gate
from vacant.policy.gate import rules as policy_rules

pytestmark = [pytest.mark.usefixtures("isolated_home")]

TAILS = st.text(alphabet=st.sampled_from(list("abcxyz -_/.;&|$()'\"\\\n\t<>=0123")), max_size=30)
SPACES = st.text(alphabet=" \t", min_size=1, max_size=3)
ENV = st.lists(st.from_regex(r"[A-Z]{1,4}=[a-z0-9]{0,3}", fullmatch=True), max_size=2).map(" ".join)


LEADS = st.sampled_from(["", "true && ", "cd . ; ", "echo x\n", "(", "x=$(", "make || ", "sleep 1 & ", "{ "])


@st.composite
def excluded_lines(draw) -> str:
    unwalled = draw(st.sampled_from(UNWALLED_COMMANDS))
    spaced = draw(SPACES).join(unwalled.split())
    return f"{draw(LEADS)}{draw(ENV)} {spaced}{draw(TAILS)}"


@settings(max_examples=300, deadline=None)
@given(excluded_lines())
@example("git push -q origin HEAD:refs/heads/b2 && cat /home/p/.config/vacant/key")
@example("git pushx; cat key")
def test_every_line_run_outside_the_wall_is_named(line):
    assert outside_the_wall(line) is not None, line


@settings(max_examples=200, deadline=None)
@given(TAILS)
@example("git stash push; git -C . log")
def test_a_line_without_the_program_is_not(line):
    assert outside_the_wall(line) is None


@pytest.fixture
def unruled(ws):
    """A workspace whose person removed the shipped push rule ([gate] remove)."""
    (ws / "vacant.toml").write_text('[gate]\nremove = ["git-push"]\n')
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    return ws


def classify(root, command: str):
    kind, intent = Claude().intent("Bash", {"command": command})
    call = HookCall("tool_pre", "s", root, tool="Bash", tool_input={"command": command}, key="t1")
    call.tool_kind, call.intent = kind, intent
    return gate.classify(root, call, policy_rules.load_policy(root))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(excluded_lines())
@example("git push -q origin HEAD:main && cat key")
def test_the_gate_holds_them_even_without_the_push_rule(unruled, line):
    verdict = classify(unruled, line)
    assert verdict.kind in ("act", "refuse"), (line, verdict)
    if verdict.kind == "act":
        assert "unwalled" in {hit.rule for hit in verdict.action.hits}


def test_claudes_sandbox_excludes_exactly_what_the_gate_holds():
    class Wall:
        hidden, readonly = (), ()

    settings = Claude.sandbox_settings(Wall())
    assert settings["sandbox.excludedCommands"] == [f for u in UNWALLED_COMMANDS for f in (u, f"{u}:*")]
    assert settings["sandbox.allowUnsandboxedCommands"] is False
