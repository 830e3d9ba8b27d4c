"""`vacant blame` over git histories the tests build: runs recorded through the real recorder,
commits, a person's edits (changes, re-indents, moves), squash, rebase, cherry-pick, a merge.

Two oracles: the test's own record of who made each line (by the edit operations, never by a
diff) for the lines a step wrote, and `git blame --line-porcelain -w -M` itself (parsed here, not
by vacant) for the commit and author of every line."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from recording import Recording
from typer.testing import CliRunner

from vacant.cli import app
from vacant.core.locations import mark_installed

pytestmark = pytest.mark.usefixtures("isolated_home")
PERSON = {"GIT_AUTHOR_NAME": "Pat Person", "GIT_AUTHOR_EMAIL": "pat@example.org", "GIT_COMMITTER_NAME": "Pat Person",
          "GIT_COMMITTER_EMAIL": "pat@example.org", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
TARGET = "src/app.txt"


def git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, env={**os.environ, **PERSON})
    assert proc.returncode == 0, f"git {args}: {proc.stderr}"
    return proc.stdout


def make_repo(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    mark_installed(root)  # after init: the state directory lives in .git/vacant
    return root


def oracle_git(repo: Path, path: str, rev: str | None = None) -> list[tuple[str | None, str | None]]:
    """(commit, author) per line as git blame -w -M says, parsed independently of vacant."""
    out = git(repo, "blame", "--line-porcelain", "-w", "-M", *([rev] if rev else []), "--", path)
    found, sha = [], None
    author = None
    for line in out.split("\n"):
        parts = line.split(" ")
        if len(parts[0]) == 40 and len(parts) >= 3 and all(c in "0123456789abcdef" for c in parts[0]):
            sha, author = parts[0], None
        elif line.startswith("author "):
            author = line[len("author "):]
        elif line.startswith("\t"):
            found.append((None, None) if set(sha or "0") == {"0"} else (sha, author))
    return found


def blame_json(repo: Path, *names: str, monkeypatch) -> dict:
    monkeypatch.chdir(repo)
    result = CliRunner().invoke(app, ["blame", "--json", *names])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


# -- a generated history ---------------------------------------------------------------------------

@dataclass
class History:
    """The file as (text, who) lines; who: ("step", run, tag) or ("person",)."""
    repo: Path
    lines: list[tuple[str, tuple]] = field(default_factory=list)
    counter: int = 0
    run: Recording | None = None
    runs: int = 0
    tags: dict[tuple[str, str], int] = field(default_factory=dict)
    target: str = TARGET
    renames: int = 0

    def fresh(self) -> str:
        self.counter += 1
        return f"item {self.counter} = value_{self.counter * 7919 % 1000}"

    def dump(self) -> None:
        (self.repo / self.target).write_text("".join(text + "\n" for text, _ in self.lines))

    def edit(self, kind: str, a: float, b: float, size: int, who: tuple) -> None:
        lines = self.lines
        at = int(a * len(lines))
        if kind == "insert" or not lines:
            lines[at:at] = [(self.fresh(), who) for _ in range(size)]
        elif kind == "replace":
            lines[at:at + size] = [(self.fresh(), who) for _ in range(size)]
        elif kind == "delete":
            del lines[at:at + size]
        elif kind == "indent":  # whitespace only: the lines keep their authors
            lines[at:at + size] = [("    " + text if not text.startswith(" ") else text.strip(), was)
                                   for text, was in lines[at:at + size]]
        else:  # move a block: its lines keep their authors
            block = lines[at:at + size]
            del lines[at:at + size]
            to = int(b * len(lines))
            lines[to:to] = block

    def agent(self, number: int, kind: str, a: float, b: float, size: int) -> None:
        if self.run is None:
            self.runs += 1
            self.run = Recording(self.repo, f"run-{self.runs}")
        tag = f"op{number}"
        self.edit(kind, a, b, size, ("step", self.run.session, tag))
        target = self.repo / self.target
        self.run.step("Write", self.dump, [str(target)], tool_input={"file_path": str(target), "n": tag})

    def person(self, kind: str, a: float, b: float, size: int) -> None:
        self.end()
        self.edit(kind, a, b, size, ("person",))
        self.dump()

    def rename(self) -> None:
        """A person renames the file (`git mv`, committed): its lines keep their authors."""
        self.end()
        self.renames += 1
        new = f"src/renamed_{self.renames}.txt"
        git(self.repo, "mv", self.target, new)
        git(self.repo, "commit", "-q", "-m", f"rename to {new}")
        self.target = new

    def end(self) -> None:
        if self.run is not None:
            self.run.end()
            self.run = None


op = st.tuples(st.sampled_from(("agent", "agent", "person", "commit", "rename")),
               st.sampled_from(("insert", "replace", "delete", "indent", "move")),
               st.floats(0, 1), st.floats(0, 1), st.integers(1, 3))


def step_tag(repo: Path, run: str, step: int) -> str:
    for line in (repo / ".git" / "vacant" / "runs" / run / "events.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record.get("type") == "step_start" and record.get("step") == step:
            return record["input"]["n"]
    raise AssertionError(f"no step {step} in {run}")


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(op, max_size=9), initial=st.integers(0, 5))
def test_every_line_has_gits_word_and_the_step_that_wrote_it(tmp_path_factory, monkeypatch, ops, initial):
    repo = make_repo(tmp_path_factory.mktemp("history") / "ws")
    history = History(repo)
    (repo / TARGET).parent.mkdir(parents=True)
    history.lines = [(history.fresh(), ("person",)) for _ in range(initial)]
    history.dump()
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", "base")
    for number, (actor, kind, a, b, size) in enumerate(ops):
        if actor == "agent" and kind != "indent":
            history.agent(number, kind, a, b, size)
        elif actor == "rename":
            history.rename()
        elif actor == "commit":
            history.end()
            git(repo, "add", "-A", "src")
            git(repo, "commit", "-q", "--allow-empty", "-m", f"commit {number}")
        else:
            history.person(kind, a, b, size)
    history.end()

    shown = blame_json(repo, history.target, monkeypatch=monkeypatch)
    assert [row["text"] for row in shown["lines"]] == [text for text, _ in history.lines]
    assert [(row["commit"], row["author"]) for row in shown["lines"]] == oracle_git(repo, history.target)
    for row, (text, who) in zip(shown["lines"], history.lines):
        if who[0] == "step":
            assert (row["origin"], row["run"]) == ("step", who[1]), text
            assert step_tag(repo, row["run"], row["step"]) == who[2]
        else:
            assert row["origin"] not in ("step", "group", "out_of_band"), (text, row)


# -- squash, rebase, cherry-pick, merge --------------------------------------------------------------

def agent_run(repo: Path, session: str, *versions: str) -> Recording:
    run = Recording(repo, session)
    for text in versions:
        run.write(TARGET, text)
    run.end()
    return run


def origins(shown: dict) -> list[tuple[str, str | None, int | None]]:
    return [(row["text"], row["run"], row["step"]) for row in shown["lines"]]


def based(tmp_path: Path, text: str, **others: str) -> Path:
    """A repository whose base commit (a person's) holds TARGET with `text`, and `others`."""
    repo = make_repo(tmp_path / "ws")
    (repo / "src").mkdir()
    (repo / TARGET).write_text(text)
    for name, content in others.items():
        (repo / name).write_text(content)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    return repo


@pytest.fixture
def feature(tmp_path) -> Path:
    """main: a person's file; feature: an agent run writes two lines, a person changes one of
    them, commits."""
    repo = based(tmp_path, "def main():\n    return 1\n")
    git(repo, "checkout", "-q", "-b", "feature")
    agent_run(repo, "run-1", "def main():\n    return 1\n\ndef helper():\n    return compute_the_answer(42)\n",
              "def main():\n    return helper()\n\ndef helper():\n    return compute_the_answer(42)\n")
    git(repo, "commit", "-q", "-am", "agent work")
    text = (repo / TARGET).read_text().replace("def helper():", "def helper() -> int:")
    (repo / TARGET).write_text(text)  # the person changes a line the agent wrote: it is theirs now
    git(repo, "commit", "-q", "-am", "a person's touch")
    return repo


def expect_feature(shown: dict, repo: Path, rev: str | None) -> None:
    assert origins(shown) == [("def main():", None, None), ("    return helper()", "run-1", 2), ("", "run-1", 1),
                              ("def helper() -> int:", None, None), ("    return compute_the_answer(42)", "run-1", 1)]
    assert [(row["commit"], row["author"]) for row in shown["lines"]] == oracle_git(repo, TARGET, rev)
    assert shown["lines"][3]["author"] == "Pat Person" and shown["lines"][3]["origin"] != "step"


def test_squash_merge_keeps_the_steps(feature, monkeypatch):
    expect_feature(blame_json(feature, TARGET, monkeypatch=monkeypatch), feature, None)
    git(feature, "checkout", "-q", "main")
    git(feature, "merge", "-q", "--squash", "feature")
    git(feature, "commit", "-q", "-m", "squashed")
    git(feature, "branch", "-q", "-D", "feature")
    git(feature, "reflog", "expire", "--expire=now", "--all")
    git(feature, "gc", "-q", "--prune=now")  # the run's own commits are gone
    expect_feature(blame_json(feature, TARGET, monkeypatch=monkeypatch), feature, None)
    expect_feature(blame_json(feature, "HEAD", "--", TARGET, monkeypatch=monkeypatch), feature, "HEAD")


def test_rebase_and_cherry_pick_keep_the_steps(feature, monkeypatch):
    git(feature, "checkout", "-q", "main")
    (feature / "README").write_text("upstream\n")
    git(feature, "add", "README")
    git(feature, "commit", "-q", "-m", "upstream moves on")
    git(feature, "checkout", "-q", "feature")
    git(feature, "rebase", "-q", "main")
    expect_feature(blame_json(feature, TARGET, monkeypatch=monkeypatch), feature, None)
    git(feature, "checkout", "-q", "-b", "picked", "main")
    for commit in git(feature, "rev-list", "--reverse", "main..feature").split():
        git(feature, "cherry-pick", commit)
    expect_feature(blame_json(feature, TARGET, monkeypatch=monkeypatch), feature, None)


def test_a_merge_keeps_both_sides(feature, monkeypatch):
    git(feature, "checkout", "-q", "main")
    text = "# maintained by the team\n" + (feature / TARGET).read_text()
    (feature / TARGET).write_text(text)
    git(feature, "commit", "-q", "-am", "main's own line")
    git(feature, "merge", "-q", "--no-edit", "feature")
    shown = blame_json(feature, TARGET, monkeypatch=monkeypatch)
    assert origins(shown)[0] == ("# maintained by the team", None, None)
    assert origins(shown)[2] == ("    return helper()", "run-1", 2)
    assert [(row["commit"], row["author"]) for row in shown["lines"]] == oracle_git(feature, TARGET)


def test_a_commit_before_the_run_is_nobodys_but_gits(tmp_path, monkeypatch):
    """A line a person removed before the run, which the run then wrote again: at the older
    commit it has the same text as the run's line, but it was committed before the run began."""
    repo = based(tmp_path, "alpha\nan old line the agent writes again\n")
    (repo / TARGET).write_text("alpha\n")
    git(repo, "commit", "-q", "-am", "the person drops it")
    agent_run(repo, "run-1", "alpha\nan old line the agent writes again\n")
    now = blame_json(repo, TARGET, monkeypatch=monkeypatch)
    assert origins(now) == [("alpha", None, None), ("an old line the agent writes again", "run-1", 1)]
    then = blame_json(repo, "HEAD~1", "--", TARGET, monkeypatch=monkeypatch)
    assert [row["origin"] for row in then["lines"]] == ["baseline", "baseline"]
    assert [(row["commit"], row["author"]) for row in then["lines"]] == oracle_git(repo, TARGET, "HEAD~1")


def test_a_line_reverted_to_the_baseline_is_not_the_agents(tmp_path, monkeypatch):
    repo = based(tmp_path, "alpha\nbeta\ngamma\n")
    agent_run(repo, "run-1", "alpha\nBETA\ngamma\n", "alpha\nBETA\ngamma\ndelta\n", "alpha\nbeta\ngamma\ndelta\n")
    shown = blame_json(repo, TARGET, monkeypatch=monkeypatch)
    assert origins(shown) == [("alpha", None, None), ("beta", None, None), ("gamma", None, None),
                              ("delta", "run-1", 2)]
    assert [(row["commit"], row["author"]) for row in shown["lines"]] == oracle_git(repo, TARGET)


def test_an_unrelated_later_run_does_not_hide_the_agents_lines(tmp_path, monkeypatch):
    repo = based(tmp_path, "alpha\n", **{"other.txt": "x\n"})
    agent_run(repo, "run-1", "alpha\nwritten by the agent\n")
    later = Recording(repo, "run-2")
    later.write("other.txt", "y\n")
    later.end()
    shown = blame_json(repo, TARGET, monkeypatch=monkeypatch)
    assert origins(shown) == [("alpha", None, None), ("written by the agent", "run-1", 1)]
    narrowed = blame_json(repo, TARGET, "--run", "run-2", monkeypatch=monkeypatch)
    assert [row["origin"] for row in narrowed["lines"]] == ["baseline", "baseline"]


def test_ranges_and_porcelain(feature, monkeypatch):
    monkeypatch.chdir(feature)
    result = CliRunner().invoke(app, ["blame", TARGET, "-L", "2,+2", "--porcelain"])
    assert result.exit_code == 0, result.output
    ours = [line for line in result.stdout.splitlines() if not line.startswith("vacant-")]
    theirs = git(feature, "blame", "--porcelain", "-w", "-M", "-L", "2,+2", "--", TARGET).splitlines()
    assert [line for line in ours if line[:1] == "\t"] == [line for line in theirs if line[:1] == "\t"]
    assert [line.split(" ")[:3] for line in ours if len(line.split(" ")[0]) == 40] == \
           [line.split(" ")[:3] for line in theirs if len(line.split(" ")[0]) == 40]
    assert "vacant-run run-1" in result.stdout and "vacant-step 2" in result.stdout
    shown = json.loads(CliRunner().invoke(app, ["blame", TARGET, "-L", "4,", "--json"]).stdout)
    assert [row["line"] for row in shown["lines"]] == [4, 5]
    assert CliRunner().invoke(app, ["blame", "-w", "-M", TARGET]).stdout == CliRunner().invoke(app, ["blame", TARGET]).stdout
    bad = CliRunner().invoke(app, ["blame", TARGET, "-L", "9,10"])
    assert bad.exit_code != 0 and "5 line(s)" in str(bad.exception or bad.output)


def test_re_indented_and_moved_lines_stay_the_agents(feature, monkeypatch):
    lines = (feature / TARGET).read_text().splitlines()
    moved = [lines[0], "  " + lines[4].strip(), lines[1], lines[2], lines[3]]  # a person's formatter, then a move
    (feature / TARGET).write_text("\n".join(moved) + "\n")
    git(feature, "commit", "-q", "-am", "reformatted")
    shown = blame_json(feature, TARGET, monkeypatch=monkeypatch)
    assert origins(shown) == [("def main():", None, None), ("  return compute_the_answer(42)", "run-1", 1),
                              ("    return helper()", "run-1", 2), ("", "run-1", 1), ("def helper() -> int:", None, None)]
    assert [(row["commit"], row["author"]) for row in shown["lines"]] == oracle_git(feature, TARGET)


# -- renames -------------------------------------------------------------------------------------

def test_a_renamed_file_keeps_the_steps_and_a_reused_old_name_lends_none(tmp_path, monkeypatch):
    """A person renames the agent's file; a later run writes a new file under the old name with a
    line of the same text. The renamed file's lines are the first run's, through the rename, and
    nothing of the later run (which never touched the renamed file) is put on them."""
    repo = based(tmp_path, "alpha\n")
    agent_run(repo, "run-1", "alpha\nshared = True\nwritten by run one\n")
    git(repo, "commit", "-q", "-am", "run one")
    git(repo, "mv", TARGET, "src/moved.txt")
    git(repo, "commit", "-q", "-m", "a person renames it")
    agent_run(repo, "run-2", "shared = True\nwritten by run two\n")  # TARGET again: a new file
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "run two")
    expected = [("alpha", None, None), ("shared = True", "run-1", 1), ("written by run one", "run-1", 1)]
    shown = blame_json(repo, "src/moved.txt", monkeypatch=monkeypatch)
    assert origins(shown) == expected
    assert [(row["commit"], row["author"]) for row in shown["lines"]] == oracle_git(repo, "src/moved.txt")
    assert origins(blame_json(repo, "HEAD", "--", "src/moved.txt", monkeypatch=monkeypatch)) == expected
    assert origins(blame_json(repo, TARGET, monkeypatch=monkeypatch)) == [("shared = True", "run-2", 1),
                                                                          ("written by run two", "run-2", 1)]
    (repo / "src/moved.txt").write_text((repo / "src/moved.txt").read_text() + "a person's new line\n")
    text = CliRunner().invoke(app, ["blame", "src/moved.txt"]).stdout.splitlines()
    theirs = git(repo, "blame", "-w", "-M", "--", "src/moved.txt").splitlines()
    # git's columns as git prints them: the commit, then (the lines came from two names) each one's file name
    assert [line.split(" (")[0] for line in text] == [line.split(" (")[0] for line in theirs]
    assert "src/app.txt" in text[0] and "src/moved.txt" in text[-1]


def test_a_staged_rename_keeps_the_steps(tmp_path, monkeypatch):
    repo = based(tmp_path, "alpha\n")
    agent_run(repo, "run-1", "alpha\nwritten by the agent\n")
    git(repo, "commit", "-q", "-am", "run one")
    git(repo, "mv", TARGET, "src/staged.txt")  # not committed yet
    shown = blame_json(repo, "src/staged.txt", monkeypatch=monkeypatch)
    assert origins(shown) == [("alpha", None, None), ("written by the agent", "run-1", 1)]


# -- -L, against git itself ------------------------------------------------------------------------

side = st.one_of(st.just(""), st.integers(0, 10).map(str))
spec = st.one_of(side, st.tuples(side, st.sampled_from(("", "+", "-")), side).map(lambda t: f"{t[0]},{t[1]}{t[2]}"))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(count=st.integers(1, 8), specs=st.lists(spec, min_size=1, max_size=2))
def test_line_ranges_select_the_lines_git_blame_selects(tmp_path_factory, count, specs):
    """Every `-L` form, ends reversed, past the file or empty: the lines shown are git's, and a
    range git refuses is refused."""
    from vacant.core.locations import WorkspaceError
    from vacant.show.gitblame import in_ranges, parse_ranges

    repo = _numbered_repo(tmp_path_factory, count)
    args = [arg for item in specs for arg in ("-L", item)]
    proc = subprocess.run(["git", "blame", "--line-porcelain", *args, "--", "f.txt"], cwd=repo, capture_output=True,
                          text=True, env={**os.environ, **PERSON})
    theirs = None if proc.returncode else [int(line.split(" ")[2]) for line in proc.stdout.splitlines()
                                           if len(line.split(" ")[0]) == 40 and len(line.split(" ")) >= 3]
    try:
        chosen = parse_ranges(specs, count)
    except WorkspaceError:
        assert theirs is None, (specs, theirs)
        return
    assert [n for n in range(1, count + 1) if in_ranges(n, chosen)] == theirs, specs


_REPOS: dict[int, Path] = {}


def _numbered_repo(factory, count: int) -> Path:
    """A repository whose f.txt has `count` committed lines (one per count, made once)."""
    if count not in _REPOS:
        repo = factory.mktemp(f"lines{count}")
        git(repo, "init", "-q")
        (repo / "f.txt").write_text("".join(f"line {n}\n" for n in range(1, count + 1)))
        git(repo, "add", "f.txt")
        git(repo, "commit", "-q", "-m", "lines")
        _REPOS[count] = repo
    return _REPOS[count]


@pytest.mark.parametrize("abbrev", [None, "12"])
def test_the_commit_column_is_as_wide_as_git_blames(feature, monkeypatch, abbrev):
    """git abbreviates to `core.abbrev` (or a length it picks for the repository's size) plus one
    digit, and a boundary commit to ^ and `core.abbrev` digits: the text's columns are git's."""
    if abbrev:
        git(feature, "config", "core.abbrev", abbrev)
    (feature / TARGET).write_text((feature / TARGET).read_text() + "not committed\n")
    monkeypatch.chdir(feature)
    text = CliRunner().invoke(app, ["blame", TARGET]).stdout.splitlines()
    theirs = git(feature, "blame", "-w", "-M", "--", TARGET).splitlines()
    assert [line.split(" (")[0] for line in text] == [line.split(" (")[0] for line in theirs]
    assert any(line.startswith("^") for line in theirs) and theirs[-1].startswith("0" * 8)
