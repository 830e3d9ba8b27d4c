"""`vacant sync [REMOTE]`: share run records and reviews through the repository's git remote."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from vacant.commands.common import print_json
from vacant.core.exitcodes import Exit


def render_result(result: dict[str, Any]) -> str:
    lines = [f"published {result['published_runs']} run(s) and {result['published_reviews']} review(s) "
             f"as {result['author']}",
             f"{result['remote']}: {result['remote_authors']} author ref(s); fast-forwarded "
             f"{len(result['fast_forwarded'])}, merged {len(result['merged'])}, pushed {len(result['pushed'])} "
             f"({result['attempts']} attempt(s), {result['seconds']} s)"]
    lines += [f"  skipped run {line}" for line in result["skipped"]]
    if not result["trusted"]:
        lines.append("warning: your key is not in .vacant-team-keys at HEAD, so the team's figures leave your "
                     "records out: `vacant sync --key --name NAME > .vacant-team-keys/NAME.pub`, commit and push it")
    return "\n".join(lines)


def render_status(status: dict[str, Any]) -> str:
    last = status["last_sync"]
    lines = [f"own key: {status['own_key'] or 'none yet (vacant sync makes one)'}"
             + ("" if status["own_key_trusted"] or not status["own_key"] else
                "  (not in .vacant-team-keys: `vacant sync --key` prints the line to commit)"),
             f"team keys: {status['team_keys']} trusted (.vacant-team-keys at HEAD)",
             f"last sync: {'never' if not last else f'''{last['remote']}, {last['seconds']} s, pushed {len(last['pushed'])}'''}",
             f"runs not yet published: {status['unpublished_runs']}",
             f"counted: {status['runs_counted']} run record(s), {status['reviews_counted']} review(s)"]
    lines += [f"  problem: {line}" for line in status["team_key_problems"]]
    for author in status["authors"]:
        who = author["name"] or "UNKNOWN KEY"
        lines.append(f"  {author['author']} {who}: {author['records']} record(s), {author['ahead']} ahead, "
                     f"{author['behind']} behind {status['remote']} (as of the last fetch)")
    for ref in status["ignored_refs"]:
        lines.append(f"  ignored ref {ref}: not refs/vacant/authors/<fingerprint>")
    lines.append(f"rejected: {len(status['rejected'])} record(s)"
                 + (" (`--json` lists each)" if status["rejected"] else ""))
    for cause in status["rejected_by_cause"]:
        lines.append(f"  {cause['records']} × {cause['reason']}")
    return "\n".join(lines)


def register(app: typer.Typer) -> None:
    @app.command("sync")
    def sync_command(
        remote: str = typer.Argument("origin", help="The git remote (name or URL) to share through."),
        show_status: bool = typer.Option(False, "--status", help="Ahead/behind, last sync, rejected records; no network."),
        key: bool = typer.Option(False, "--key", help="Print the line that makes your key trusted: commit it as .vacant-team-keys/NAME.pub."),
        name: str = typer.Option("", "--name", metavar="NAME", help="With --key: the name on that line (default: your login)."),
        as_json: bool = typer.Option(False, "--json"),
    ) -> None:
        """Fetch the team's run records and reviews, merge them with yours by union, push; never force."""
        # imported here: cryptography and the Stop pipeline (~0.2 s) are for sync only, not for
        # every `vacant` start-up
        import getpass

        from vacant.share import signing, sync, teamkey

        root = teamkey.repository_root(Path.cwd())
        if key:
            signer = signing.own_signer()
            line = signer.team_line(name or getpass.getuser())
            print_json({"fingerprint": signer.fingerprint, "line": line}) if as_json else typer.echo(line)
            return
        if show_status:
            status = sync.status(root, remote)
            print_json(status) if as_json else typer.echo(render_status(status))
            if status["rejected"]:
                raise typer.Exit(int(Exit.FAILED))
            return
        result = sync.sync(root, remote).to_json()
        print_json(result) if as_json else typer.echo(render_result(result))
