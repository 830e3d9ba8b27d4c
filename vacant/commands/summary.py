"""`vacant summary BASE..HEAD [--json | --markdown]`: who wrote the lines a change range adds
(vacant/show/summary.py), from this workspace's runs and the team's synced records, so it works in
CI from a full clone after `vacant sync`."""

from __future__ import annotations

import re
from pathlib import Path

import typer

from vacant.commands.common import print_json
from vacant.core.locations import WorkspaceError, list_runs
from vacant.show import gitblame
from vacant.show.blame import finding_marks
from vacant.show.summary import FileLines, FindingFact, RunFacts, render_markdown, render_text, summarize
from vacant.store.loaded import latest_report

_HUNK = re.compile(rb"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def register(app: typer.Typer) -> None:
    @app.command("summary")
    def summary_command(
        span: str = typer.Argument(..., metavar="BASE..HEAD", help="The change range (BASE alone: BASE..HEAD)."),
        as_json: bool = typer.Option(False, "--json"),
        markdown: bool = typer.Option(False, "--markdown", help="Markdown for a pull request's comment."),
    ) -> None:
        """For the lines a change range adds: how many each agent cell and each person wrote, the runs
        and steps, the standing findings and their levels, and read coverage."""
        if as_json and markdown:
            raise WorkspaceError("give --json or --markdown, not both")
        # imported here: the share package loads cryptography (~50 ms)
        from vacant.share.teamkey import open_store, repository_root
        from vacant.share.teamblame import BASELINE, team_runs

        root = repository_root(Path.cwd())
        store = open_store(root)
        base, head = _range(root, span)
        local = list_runs(root)
        team = team_runs(root, store, local)
        reports = [report for report in map(latest_report, local) if report]
        ancestry = gitblame.Ancestry(root)
        files = []
        for path, added in _added_lines(root, base, head).items():
            names_for, earlier = gitblame.names_along(root, path, head, ancestry)
            blame = team.blame(path, gitblame.file_at(root, head, path), names_for, earlier)
            git_lines = gitblame.blame_lines(root, path, head, len(blame.texts))
            starts = {item.record.run: item.record.commit for item in blame.considered}
            marks = finding_marks(root, path, blame.texts, reports)
            rows = gitblame.rows(blame.texts, blame.authors, git_lines, marks, starts, ancestry, BASELINE)
            files.append(FileLines(path, rows, added))
        located = {run_dir.name for run_dir in local if latest_report(run_dir)}
        facts = {run: RunFacts(run, source.source, source.key_name,
                               record.read_coverage.state if record.read_coverage else None,
                               tuple(FindingFact(f.id, f.name, f.level, f.step, f.path) for f in record.findings),
                               by_text=run in located)
                 for run, (record, source) in team.runs.items()}
        summary = summarize(base, head, files, facts, team.rejected)
        if as_json:
            print_json(summary.to_json())
        else:
            typer.echo(render_markdown(summary) if markdown else render_text(summary), nl=not markdown)


def _range(repo: Path, span: str) -> tuple[str, str]:
    """BASE..HEAD (or BASE...HEAD: from their merge base, or BASE alone) as two commit ids."""
    if "..." in span:
        left, right = span.split("...", 1)
    elif ".." in span:
        left, right = span.split("..", 1)
    else:
        left, right = span, "HEAD"
    base, head = _commit(repo, left or "HEAD"), _commit(repo, right or "HEAD")
    if "..." in span:
        found = gitblame.git(repo, "merge-base", base, head)
        if found is None:
            raise WorkspaceError(f"{span}: the two commits have no merge base")
        base = found.stdout.decode().strip()
    return base, head


def _commit(repo: Path, rev: str) -> str:
    if rev.startswith("-"):
        raise WorkspaceError(f"{rev} is not a commit of this repository")
    found = gitblame.git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    if found is None:
        raise WorkspaceError(f"{rev} is not a commit of this repository")
    return found.stdout.decode().strip()


def _added_lines(repo: Path, base: str, head: str) -> dict[str, list[int]]:
    """path -> the line numbers at HEAD that `git diff -w -M BASE HEAD` marks added."""
    proc = gitblame.git(repo, "-c", "core.quotePath=false", "diff", "-w", "-M", "-U0", "--no-color", "--no-ext-diff",
                        "--src-prefix=a/", "--dst-prefix=b/", base, head)
    if proc is None:
        raise WorkspaceError(f"git diff {base[:12]} {head[:12]} failed")
    found: dict[str, list[int]] = {}
    path: str | None = None
    at = 0
    for line in proc.stdout.split(b"\n"):
        if line.startswith(b"+++ "):
            name = _unquote(line[4:].rstrip(b"\t"))  # git ends a name holding a space with a TAB
            path = name[2:] if name.startswith("b/") else None
            continue
        hunk = _HUNK.match(line)
        if hunk:
            at = int(hunk.group(1))
        elif path is not None and line.startswith(b"+"):
            found.setdefault(path, []).append(at)
            at += 1
    return found


def _unquote(raw: bytes) -> str:
    """A path as git diff prints it: C-quoted ("…", octal escapes) when it holds odd bytes."""
    if not raw.startswith(b'"'):
        return raw.decode("utf-8", errors="replace")
    body = raw[1:-1] if raw.endswith(b'"') else raw[1:]
    return body.decode("unicode_escape").encode("latin-1").decode("utf-8", errors="replace")
