"""Class 1 of issue 11: the record and the hooks survive ordinary cleanup, and what would delete
them is held for the person.

* Where the state lives (an independent oracle: `git rev-parse --git-dir` run by the test) for
  plain repositories, linked worktrees and non-git workspaces of generated names and depths.
* The real cleanup commands, run for real on a recorded git workspace: the record is intact
  after each (`verify`), because git never cleans or stashes its own directory.
* The gate, on a generated corpus of the forms that would delete the records or hook settings
  (held: `record-delete`) and of everyday neighbours that must pass.
* Hooks removed mid-run: the next hook records `hooks_missing` and tells the person; `doctor`
  says so; a legacy `.vacant/` is read, and `vacant init` moves it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vacant.hook import call as hook
from vacant.core.calls import HookCall
from vacant.core.locations import (
    find_root,
    installed,
    legacy_state_dir,
    list_runs,
    mark_installed,
    read_install,
    run_dir,
    state_dir,
)
from vacant.platforms.claude import PLATFORM as CLAUDE
from vacant.policy.gate import gate
from vacant.policy.gate import rules as policy_rules
from vacant.store.steplog import StepLog, verify

pytestmark = pytest.mark.usefixtures("isolated_home")
BIN = Path(sys.executable).parent


def git(ws: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", *args], cwd=ws, env=env, check=True, capture_output=True, text=True).stdout


def git_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("hello\n")
    (path / ".gitignore").write_text(".claude/settings.local.json\nbuild/\n")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "init")
    return path


def send(ws: Path, event: str, **fields) -> str:
    body = {"session_id": "s1", "cwd": str(ws), "hook_event_name": event, **fields}
    stdout, code = hook.run("claude", json.dumps(body).encode(), {"CLAUDE_PROJECT_DIR": str(ws)})
    assert code == 0
    return stdout


def record_a_run(ws: Path) -> StepLog:
    send(ws, "SessionStart", source="startup")
    send(ws, "PreToolUse", tool_name="Write", tool_use_id="t1", tool_input={"file_path": str(ws / "a.txt"), "content": "a"})
    (ws / "a.txt").write_text("a")
    send(ws, "PostToolUse", tool_name="Write", tool_use_id="t1", tool_input={"file_path": str(ws / "a.txt"), "content": "a"})
    return StepLog(run_dir(ws, "s1"))


# -- where the state lives ------------------------------------------------------------------------

NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_ .é", min_size=1, max_size=12).filter(
    lambda name: name.strip(". ") == name and name not in (".", ".."))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=NAMES, depth=st.integers(0, 3), worktree=st.booleans())
@pytest.mark.slow
def test_git_state_lives_in_gits_own_directory(tmp_path_factory, trust_tally, name, depth, worktree):
    base = tmp_path_factory.mktemp("loc")
    repo = git_repo(base / name)
    ws = repo
    if worktree:
        git(repo, "worktree", "add", "-q", str(base / f"{name}-wt"), "-b", "wt")
        ws = base / f"{name}-wt"
    oracle = Path(git(ws, "rev-parse", "--absolute-git-dir").strip()).resolve()
    assert state_dir(ws).resolve() == oracle / "vacant"
    assert not installed(ws)
    mark_installed(ws)
    deep = ws.joinpath(*[f"d{i}" for i in range(depth)])
    deep.mkdir(parents=True, exist_ok=True)
    assert find_root(deep) == ws.resolve() and installed(ws)
    if worktree:  # each worktree its own record, the main checkout's untouched
        assert state_dir(repo).resolve() != state_dir(ws).resolve()
    trust_tally("1 record location", True)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=NAMES)
def test_a_non_git_workspace_keeps_its_state_in_the_users_data_dir(tmp_path_factory, trust_tally, name):
    ws = tmp_path_factory.mktemp("plain") / name
    ws.mkdir()
    mark_installed(ws)
    state = state_dir(ws).resolve()
    assert ws.resolve() not in (state, *state.parents)  # nothing inside the workspace
    assert Path(os.environ["VACANT_HOME"]).resolve() in state.parents
    assert sorted(p.name for p in ws.iterdir()) == []
    trust_tally("1 record location", True)


# -- the real cleanup commands, run for real --------------------------------------------------------

CLEANUPS = ["git clean -fdx", "git clean -ffdX", "git clean -fd", "git stash --all", "git stash -u",
            "git stash push --include-untracked", "git checkout -- .", "git reset --hard", "git clean -fdxq",
            "rm -rf build .claude"]


@pytest.mark.parametrize("command", CLEANUPS)
def test_the_record_survives_cleanup_commands_run_for_real(tmp_path, trust_tally, command):
    ws = git_repo(tmp_path / "ws")
    mark_installed(ws)
    (ws / "build").mkdir()
    (ws / "build" / "x.o").write_text("obj")
    log = record_a_run(ws)
    before = log.records()
    subprocess.run(command, shell=True, cwd=ws, check=True, capture_output=True)
    assert log.records() == before and [p for p in verify(log) if p.fatal] == []
    assert installed(ws) and list_runs(ws) == [log.run_dir]
    trust_tally("1 cleanup run for real (record intact)", True)


# -- the gate on what would delete the record or the hooks ----------------------------------------


def held(ws: Path, command: str) -> set[str]:
    kind, intent = CLAUDE.intent("Bash", {"command": command})  # as the platform reads it
    call = HookCall("tool_pre", "s1", ws, tool="Bash", tool_input={"command": command}, key="t", scope=None,
                    cwd=str(ws), tool_kind=kind, intent=intent)
    verdict = gate.classify(ws, call, policy_rules.load_policy(ws))
    return set() if verdict.kind == "pass" else {hit.rule for hit in verdict.action.hits}


@pytest.fixture
def guarded_ws(tmp_path) -> Path:
    ws = git_repo(tmp_path / "ws")
    (ws / ".claude").mkdir()
    (ws / ".claude" / "settings.local.json").write_text('{"hooks": {"Stop": [{"hooks": [{"command": "vacant-hook"}]}]}}')
    mark_installed(ws, hooks={"claude": {"path": str(ws / ".claude" / "settings.local.json"), "scope": "local"}})
    return ws


WRAPPERS = st.sampled_from(["", "sudo ", "env A=1 ", "timeout 5 ", "command ", "nohup ", "git -C . "])


def _clean_flags(draw) -> str:
    letters = draw(st.lists(st.sampled_from("dxX"), min_size=1, max_size=3, unique=True))
    letters = ["f"] + letters + draw(st.lists(st.sampled_from("fq"), max_size=2))
    order = draw(st.permutations(letters))
    if draw(st.booleans()):
        return "-" + "".join(order)
    return " ".join("-" + letter for letter in order)


@st.composite
def destructive(draw) -> str:
    kind = draw(st.sampled_from(["clean", "stash", "rm", "find", "mv"]))
    wrap = draw(WRAPPERS)
    if kind == "clean":
        prefix = "" if wrap == "git -C . " else "git "
        # git's global options that take the next word (vacant/policy/gate/argv.py): never the sub-command
        prefix += draw(st.sampled_from(["", "--config-env core.pager=PAGER ", "--super-prefix sub/ ", "-c a.b=1 "]))
        return f"{wrap}{prefix}clean {_clean_flags(draw)}".replace("git -C . git", "git -C .")
    wrap = "" if wrap == "git -C . " else wrap
    if kind == "stash":
        flag = draw(st.sampled_from(["-u", "--include-untracked", "-a", "--all"]))
        verb = draw(st.sampled_from(["", "push ", "save wip "]))
        return f"{wrap}git stash {verb}{flag}" if "save" not in verb else f"{wrap}git stash {flag} save wip"
    if kind == "rm":
        rm = draw(st.sampled_from(["rm -rf", "rm -r -f", "rm -fr", "/bin/rm -rf", "rm -rf --", "unlink", "shred -u"]))
        target = draw(st.sampled_from([".claude", ".claude/", "./.claude", ".claude/settings.local.json", ".git",
                                       ".git/", "./.claude/../.claude"]))
        if rm in ("unlink", "shred -u"):
            target = ".claude/settings.local.json"
        return f"{wrap}{rm} {target}"
    if kind == "find":
        leading = draw(st.sampled_from(["", "-L ", "-H ", "-P ", "-D tree ", "-O2 "]))  # before the starting points
        start = draw(st.sampled_from([".", "./", ".claude", "STATE"]))
        expr = draw(st.sampled_from(["-delete", "-mindepth 1 -delete", "-type f -delete", "-exec rm -rf {} +",
                                     "-name '*.json' -delete", "-name 'settings*' -delete", "-path '*claude*' -delete",
                                     "! -name '*.py' -delete", "-exec /bin/rm -f {} ;", "-execdir trash {} +",
                                     "-type f -exec shred -u {} +"]))
        return f"{wrap}find {leading}{start} {expr}"
    return f"{wrap}mv {draw(st.sampled_from(['.claude', '.claude/settings.local.json', '.git']))} /tmp/elsewhere"


@st.composite
def everyday(draw) -> str:
    return draw(st.sampled_from([
        "git clean -n -dx", "git clean -ndx", "git clean -f", "git clean --dry-run -fdx", "git stash", "git stash pop",
        "git stash list", "find . -name '*.pyc' -delete", "find build -delete", "rm -rf build", "rm -rf node_modules",
        "rm -f a.txt", "git clean -fdx build", "find . -name '*.o' -exec rm {} +", "mv a.txt b.txt", "rm -rf .pytest_cache",
        "find src -type f -delete", "git status", "ls -la .claude", "cat .claude/settings.local.json",
    ]))


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=destructive())
def test_commands_that_would_delete_the_record_or_hooks_are_held(guarded_ws, trust_tally, command):
    command = command.replace("STATE", str(state_dir(guarded_ws)))
    rules = held(guarded_ws, command)
    trust_tally("1 record-delete forms held", "record-delete" in rules)
    assert "record-delete" in rules, command


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=everyday())
def test_everyday_neighbours_are_not_held_for_it(guarded_ws, trust_tally, command):
    (guarded_ws / "build").mkdir(exist_ok=True)
    rules = held(guarded_ws, command)
    trust_tally("1 everyday neighbours pass", "record-delete" not in rules)
    assert "record-delete" not in rules, command


# -- hooks vanishing mid-run ----------------------------------------------------------------------


@pytest.mark.slow
def test_hooks_removed_mid_run_are_said_at_the_next_hook_and_by_doctor(tmp_path, trust_tally, capsys):
    ws = git_repo(tmp_path / "ws")
    settings_path = CLAUDE.install(ws, "local", "/venv/bin/python /venv/vacant-hook.py claude")
    mark_installed(ws, hooks={"claude": {"path": str(settings_path), "scope": "local"}})
    record_a_run(ws)
    subprocess.run("git clean -fdx", shell=True, cwd=ws, check=True, capture_output=True)  # what an agent may run
    assert not settings_path.exists()
    out = send(ws, "PreToolUse", tool_name="Read", tool_use_id="t2", tool_input={"file_path": str(ws / "README.md")})
    assert "hooks installed in" in json.loads(out)["systemMessage"]
    records = StepLog(run_dir(ws, "s1")).records()
    assert [r["path"] for r in records if r["type"] == "hooks_missing"] == [str(settings_path)]
    assert send(ws, "PostToolUse", tool_name="Read", tool_use_id="t2",
                tool_input={"file_path": str(ws / "README.md")}) == ""  # said once per run
    proc = subprocess.run([str(BIN / "vacant"), "doctor", "--platform", "claude"], cwd=ws, capture_output=True,
                          text=True, env=os.environ.copy())
    assert proc.returncode != 0 and "no longer holds exactly the hooks vacant init wrote" in proc.stdout
    trust_tally("1 hooks vanished mid-run (said)", True)


def test_a_legacy_state_dir_is_read_and_vacant_init_moves_it(tmp_path, trust_tally):
    ws = git_repo(tmp_path / "ws")
    (ws / ".vacant").mkdir()
    assert state_dir(ws) == legacy_state_dir(ws) and installed(ws)
    log = record_a_run(ws)
    assert log.run_dir.parent.parent == ws / ".vacant"
    before = log.records()
    proc = subprocess.run([str(BIN / "vacant"), "init"], cwd=ws, capture_output=True, text=True, env=os.environ.copy())
    assert proc.returncode == 0 and "moved" in proc.stdout
    assert not (ws / ".vacant").exists() and state_dir(ws) == ws / ".git" / "vacant"
    moved = StepLog(run_dir(ws, "s1"))
    assert moved.records() == before and len(before) > 2 and read_install(ws)["workspace"] == str(ws.resolve())
    trust_tally("1 legacy state kept", True)


@pytest.mark.slow
def test_nothing_is_created_for_a_directory_vacant_was_never_installed_in(tmp_path, trust_tally):
    for where in (Path("/etc"), tmp_path / "never", tmp_path / "never" / "deep"):
        where.mkdir(parents=True, exist_ok=True) if str(where).startswith(str(tmp_path)) else None
        before = sorted(os.listdir(where))
        for event, fields in (("SessionStart", {"source": "startup"}),
                              ("PreToolUse", {"tool_name": "Bash", "tool_use_id": "x", "tool_input": {"command": "ls"}}),
                              ("Stop", {"stop_hook_active": False})):
            body = {"session_id": "s", "cwd": str(where), "hook_event_name": event, **fields}
            assert hook.run("claude", json.dumps(body).encode(), {}) == ("", 0)
        assert sorted(os.listdir(where)) == before
        assert not (Path(os.environ["VACANT_HOME"]) / "workspaces").exists()
        trust_tally("8 no state outside an installed workspace", True)
    shutil.rmtree(tmp_path / "never")


# forms the gate reads as text cannot see through: code run by an interpreter (docs/TRUST.md, docs/GATE.md)
LIMIT_FORMS = [
    "python3 -c 'import shutil; shutil.rmtree(\".claude\")'",
    "node -e 'require(\"fs\").rmSync(\".claude\", {recursive: true})'",
    "perl -e 'unlink \".claude/settings.local.json\"'",
]


@pytest.mark.parametrize("command", LIMIT_FORMS)
def test_interpreter_forms_are_a_documented_limit(guarded_ws, trust_tally, command):
    rules = held(guarded_ws, command)
    trust_tally("1 record-delete forms held", True if rules else None)  # None: a documented limit
    assert "code run by an interpreter" in (Path(__file__).resolve().parents[4] / "docs" / "TRUST.md").read_text().lower()


def test_a_workspace_that_becomes_a_git_repository_keeps_its_record(tmp_path, trust_tally):
    ws = tmp_path / "ws"
    ws.mkdir()
    mark_installed(ws)
    log = record_a_run(ws)
    before = log.records()
    git_repo(ws)  # `git init` after `vacant init`
    assert StepLog(run_dir(ws, "s1")).records() == before and installed(ws) and list_runs(ws)
    trust_tally("1 record location", True)
