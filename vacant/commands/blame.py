"""`vacant blame [REV --] FILE [--run RUN] [--team | --local] [-L N,M] [--json | --porcelain]`: per
line, git blame's commit, author and date and, where a recorded step wrote the line, its run, step,
tool and agent cell (vacant/show/blame.py; git's side: vacant/show/gitblame.py; the team's synced
records: vacant/share/teamblame.py). The synced records count whenever the repository holds some
(as `vacant summary` counts them), so a clone after `vacant sync` names the agents' lines without a
flag; `--local` (or `--run`) keeps to this machine's runs."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import typer

from vacant.commands.common import print_json, workspace
from vacant.core.linecarry import NamesFor
from vacant.core.locations import WorkspaceError, list_runs, resolve_run
from vacant.show import gitblame
from vacant.show.blame import BASELINE, blame_file, finding_marks, named_path, workspace_path
from vacant.store.loaded import latest_report


def register(app: typer.Typer) -> None:
    @app.command("blame")
    def blame_command(
        names: list[str] = typer.Argument(..., metavar="[REV --] FILE",
                                          help="A file of the workspace; with REV, the file at that commit."),
        run: Optional[str] = typer.Option(None, "--run", metavar="RUN", help="Only this run (id or prefix); default: every run."),
        all_runs: bool = typer.Option(False, "--all-runs", hidden=True, help="Every run (the default)."),
        ranges: list[str] = typer.Option([], "-L", metavar="N,M", help="Only these lines (git blame's -L N,M / N,+K)."),
        as_json: bool = typer.Option(False, "--json"),
        as_porcelain: bool = typer.Option(False, "--porcelain", help="git blame --porcelain, with vacant's headers."),
        team: bool = typer.Option(False, "--team", help="Also the team's synced run records (vacant sync): the "
                                  "default when the repository holds some."),
        local_only: bool = typer.Option(False, "--local", help="Only this machine's runs, not the team's synced records."),
        _ignore_whitespace: bool = typer.Option(False, "-w", help="Always on: whitespace is ignored, as git blame -w."),
        _moves: bool = typer.Option(False, "-M", help="Always on: moved lines keep their author, as git blame -M."),
    ) -> None:
        """For every line of FILE: git's commit, author and date, and the recorded step that wrote it."""
        names = [name for name in names if name != "--"]  # click keeps a `--` that options follow
        if len(names) > 2:
            raise WorkspaceError("give FILE, or REV -- FILE")
        rev, file = (names[0], names[1]) if len(names) == 2 else (None, names[0])
        if as_json and as_porcelain:
            raise WorkspaceError("give --json or --porcelain, not both")
        if run is not None and (all_runs or team):
            raise WorkspaceError("--run RUN narrows blame to one run: give it without --all-runs or --team")
        if team and local_only:
            raise WorkspaceError("give --team or --local, not both")
        root = workspace()
        repo = gitblame.repository(root)
        team = team or (run is None and not local_only and _synced(repo))
        path = named_path(root, file, Path.cwd()) if rev else workspace_path(root, file, Path.cwd())
        repo_path = _in_repo(root, repo, path)
        content = gitblame.file_at(repo, rev, repo_path) if rev and repo else None
        if rev and repo is None:
            raise WorkspaceError(f"blame at {rev} needs a git repository: {root} is not in one")
        runs = list_runs(root) if run is None else [resolve_run(root, run)]
        ancestry = gitblame.Ancestry(repo)
        if team:
            found = _team(root, repo_path, rev, runs, content, gitblame.names_along(repo, repo_path, rev, ancestry))
        else:
            prefix = repo_path[:len(repo_path) - len(path)]  # the workspace's directory in the repository
            names_for, _ = gitblame.names_along(repo, repo_path, rev, ancestry, prefix)
            found = _local(root, path, rev, runs, content, names_for)
        git_lines = gitblame.blame_lines(repo, repo_path, rev, len(found.texts))
        rows = gitblame.rows(found.texts, found.authors, git_lines, found.findings, found.starts, ancestry, found.plain)
        chosen = gitblame.parse_ranges(ranges, len(rows))
        rows = [row for row in rows if gitblame.in_ranges(row.line, chosen)]
        if as_json:
            print_json({**found.head, "lines": [row.to_json() for row in rows], **found.tail})
        elif as_porcelain:
            typer.echo(gitblame.porcelain(rows), nl=False)
        else:
            typer.echo(gitblame.render(rows, repo_path, gitblame.abbrev_of(repo)) + found.text_tail)


@dataclass
class Found:
    """A file's lines and their recorded authors, before git's word is put beside them."""
    head: dict[str, Any]  # the JSON's fields before `lines`
    texts: list[str]
    authors: list[Any]
    findings: dict[int, list[str]]
    starts: dict[str, str | None]  # run -> HEAD when it started
    plain: Any  # the author of a line no step wrote
    tail: dict[str, Any] = field(default_factory=dict)  # the JSON's fields after `lines`
    text_tail: str = ""


def _local(root: Path, path: str, rev: str | None, runs: list[Path], content: bytes | None,
           names_for: NamesFor | None) -> Found:
    blame = blame_file(root, path, runs, content, names_for)
    return Found({"path": path, "rev": rev, "runs": blame.runs}, [line.text for line in blame.lines],
                 [line.author for line in blame.lines], {line.line: line.findings for line in blame.lines},
                 blame.starts, BASELINE)


def _synced(repo: Path | None) -> bool:
    """Whether the repository holds team records (an author ref `vacant sync` fetched or published)."""
    if repo is None:
        return False
    listed = gitblame.git(repo, "for-each-ref", "--count=1", "--format=%(refname)", "refs/vacant/authors/")
    return bool(listed and listed.stdout.strip())


def _in_repo(root: Path, repo: Path | None, path: str) -> str:
    """The workspace path as git names it (relative to the repository's top)."""
    if repo is None:
        return path
    try:
        return (Path(root).resolve() / path).relative_to(repo.resolve()).as_posix()
    except ValueError:
        return path


def _team(root: Path, path: str, rev: str | None, runs: list[Path], content: bytes | None,
          renamed: tuple[NamesFor | None, tuple[str, ...]]) -> Found:
    """Line-level across machines: this workspace's runs and the team's synced run records."""
    # imported here: the share package loads cryptography (~50 ms) that plain blame never needs
    from vacant.share.teamkey import open_store, repository_root
    from vacant.share.teamblame import BASELINE as TEAM_BASELINE
    from vacant.share.teamblame import file_level_text, team_blame

    repo = repository_root(Path.cwd())
    current = (repo / path).read_bytes() if content is None else content
    blame = team_blame(root, open_store(repo), path, runs, current, *renamed)
    reports = [report for report in map(latest_report, runs) if report]
    findings = finding_marks(root, path, blame.texts, reports)
    data = blame.to_json()
    head = {"path": data["path"], "rev": rev, "line_key": data["line_key"], "runs": data["runs"]}
    starts = {item.record.run: item.record.commit for item in blame.considered}
    return Found(head, blame.texts, blame.authors, findings, starts, TEAM_BASELINE,
                 {"file_level": data["file_level"], "rejected": data["rejected"]}, file_level_text(blame))
