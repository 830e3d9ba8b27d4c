"""`vacant summary BASE..HEAD` over a git history the test builds: a run recorded through the real
recorder and Stop pipeline (a planted wrong value the check finds), a person's commits, a squash
merge whose run commits are gone. The test knows who wrote each added line by construction; git's
own diff says which lines the range adds."""

from __future__ import annotations

import json

import pytest
from recording import HOSTILE, cli, planted_run
from test_gitblame import git, make_repo

pytestmark = pytest.mark.usefixtures("isolated_home")


def history(repo, fix: bool):
    """main: a base commit; a branch: the planted run (config.py, 4 lines, by step 2; the markup
    file, 1 line, by the Bash step 3), a person's README (2 lines) and, with `fix`, the person's fix
    of the RATE line; squash-merged, the branch deleted and its commits pruned."""
    (repo / "vacant.toml").write_text("")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "checkout", "-q", "-b", "work")
    run = planted_run(repo)
    run.end()
    (repo / "README.md").write_text("# demo\nsettings live in config.py\n")
    if fix:
        (repo / "config.py").write_text((repo / "config.py").read_text().replace("RATE = 0.5", "RATE = 0.08"))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "work")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--squash", "work")
    git(repo, "commit", "-q", "-m", "squashed")
    git(repo, "branch", "-q", "-D", "work")
    git(repo, "reflog", "expire", "--expire=now", "--all")
    git(repo, "gc", "-q", "--prune=now")
    return run


@pytest.mark.slow
@pytest.mark.parametrize("fix", [False, True])
def test_the_range_counts_each_writer_and_the_standing_finding(tmp_path, fix):
    repo = make_repo(tmp_path / "ws")
    run = history(repo, fix)
    proc = cli(["summary", "HEAD~1..HEAD", "--json"], repo)
    assert proc.returncode == 0, proc.stderr
    shown = json.loads(proc.stdout)
    added = {}  # git's own word on what the range adds, counted here
    for line in git(repo, "diff", "-w", "--numstat", "-z", "HEAD~1", "HEAD").split("\0"):
        if line:
            plus, _, path = line.split("\t", 2)
            added[path] = int(plus)
    assert shown["added"] == sum(added.values())
    agent = added["config.py"] + added[HOSTILE] - (1 if fix else 0)  # the run's files, but the fixed RATE line
    people = shown["added"] - agent  # the files made before the run (planted_run's contract, notes), README
    assert (shown["agent_lines"], shown["people_lines"]) == (agent, people) and agent == 5 - fix
    assert [(p["author"], p["lines"]) for p in shown["people"]] == [("Pat Person", people)]
    (cell,) = shown["cells"]
    assert cell["cell"]["platform"] == "claude-code" and cell["cell"]["task_family"] == "config"
    (ran,) = shown["runs"]
    assert (ran["run"], ran["steps"], ran["source"]) == (run.session, [2, 3], "local")
    report = json.loads((run.run_dir / "report.json").read_text())
    assert ran["read_coverage"] == report["read_coverage"]["state"]
    if fix:
        assert shown["findings"] == [] and shown["levels"] == {}
    else:
        (finding,) = report["findings"]
        assert [(f["id"], f["level"], f["step"]) for f in shown["findings"]] == [
            (finding["id"], finding["level"], finding["step"])]
    by_file = {f["path"]: f for f in shown["files"]}
    assert by_file[HOSTILE]["agent_lines"] == 1 and by_file["README.md"]["people_lines"] == 2

    markdown = cli(["summary", "HEAD~1..HEAD", "--markdown"], repo).stdout
    assert markdown.startswith(f"### vacant: {shown['agent_lines']} of {shown['added']} added line(s)")
    assert "</script>" not in markdown and "<img" not in markdown  # a comment renders no markup from paths
    text = cli(["summary", "HEAD~1"], repo).stdout
    assert f"run {run.session}" in text and "Pat Person" in text


@pytest.mark.slow
def test_a_bad_range_is_a_clear_error(tmp_path):
    repo = make_repo(tmp_path / "ws")
    (repo / "a").write_text("a\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    for span in ("nope..HEAD", "-p..HEAD", "HEAD...nope"):
        proc = cli(["summary", "--", span], repo)
        assert proc.returncode == 3 and proc.stderr.startswith("vacant: "), (span, proc.stderr)


@pytest.mark.slow
def test_a_range_that_renames_the_agents_file_still_counts_its_lines(tmp_path):
    """A pull request in which the agent writes a file and a person then renames it (and adds a
    line): the added lines are counted by who wrote them, through the rename."""
    from test_gitblame import agent_run, based

    repo = based(tmp_path, "alpha\n")
    git(repo, "checkout", "-q", "-b", "work")
    agent_run(repo, "run-1", "alpha\nfirst agent line\nsecond agent line\n")
    git(repo, "commit", "-q", "-am", "agent")
    git(repo, "mv", "src/app.txt", "src/renamed.txt")
    (repo / "src" / "renamed.txt").write_text((repo / "src" / "renamed.txt").read_text() + "a person's line\n")
    git(repo, "commit", "-q", "-am", "a person renames it and adds a line")
    proc = cli(["summary", "main..work", "--json"], repo)
    assert proc.returncode == 0, proc.stderr
    shown = json.loads(proc.stdout)
    added = sum(int(line.split("\t")[0]) for line in git(repo, "diff", "-w", "-M", "--numstat", "main", "work").splitlines())
    assert (shown["added"], shown["agent_lines"], shown["people_lines"]) == (added, 2, added - 2)
    assert [(r["run"], r["steps"]) for r in shown["runs"]] == [("run-1", [1])]
