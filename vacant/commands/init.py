"""`vacant init [--platform P] [--scope S] [--json]`: the workspace's state directory, and with a
platform, vacant's hooks in that platform's settings. Every file it touched is listed, inside the
workspace or not; a bad platform or scope changes nothing."""

from __future__ import annotations

from typing import Optional

import typer

from vacant.commands import footprint
from vacant.commands.common import print_json
from vacant.core.locations import ensure_state_dir, legacy_state_dir, mark_installed, migrate_legacy, new_root, state_dir
from vacant.daemon import lifecycle
from vacant.platforms.all_platforms import load, names
from vacant.platforms.settings_file import hook_command

SCOPES = ("local", "project", "user")


def check_scope(platform, scope: str) -> str:
    if scope not in SCOPES or (scope != "local" and scope not in platform.scopes):
        allowed = ", ".join(s for s in SCOPES if s == "local" or s in platform.scopes)
        raise typer.BadParameter(f"{platform.name} takes --scope {allowed}", param_hint="--scope")
    return scope


def _install(platform, root, scope: str):
    """A platform with http hooks (Claude) also gets, in its local settings, http hooks to the
    workspace daemon's fixed port where the call decides nothing (see platforms/claude.py HTTP_EVENTS)."""
    if platform.http_hooks and scope == "local":
        config = lifecycle.ensure_config(root)
        http = {"url": f"http://127.0.0.1:{config['port']}/hook/{platform.name}", "token": config["secret"]}
        return platform.install(root, scope, hook_command(platform.name, scope), http=http)
    return platform.install(root, scope, hook_command(platform.name, scope))


def register(app: typer.Typer) -> None:
    @app.command("init")
    def init_command(
        platform: Optional[str] = typer.Option(None, "--platform", metavar="NAME",
                                               help="Install this platform's hooks: " + ", ".join(names(hooked_only=True)) + "."),
        scope: str = typer.Option("local", "--scope", metavar="SCOPE",
                                  help="local (this machine, not committed), project (committed: a portable "
                                       "`vacant-hook` command) or user (every project of yours)."),
        as_json: bool = typer.Option(False, "--json", help="Print what was touched as one JSON object."),
    ) -> None:
        """Create the state directory here; with --platform, install vacant's hooks and list every file touched."""
        root = new_root()
        chosen = load(platform) if platform else None  # an unknown name fails here, before anything is written
        if chosen is not None:
            check_scope(chosen, scope)
        files = chosen.files(root) if chosen is not None else []
        before = footprint.snapshot(footprint.candidates(root, files))
        moved = migrate_legacy(root)  # a `.vacant/` of an older vacant: out of reach of git clean
        ensure_state_dir(root)  # the daemon's config lives there
        target = _install(chosen, root, scope) if chosen is not None else None
        hooks = {chosen.name: {"path": str(target), "scope": scope}} if chosen is not None and target else {}
        mark_installed(root, hooks=hooks)  # hooks record only in an installed workspace
        state = state_dir(root)
        done = footprint.changes(before, footprint.candidates(root, files))
        footprint.remember_created_dirs(root, done)
        if as_json:
            print_json({"workspace": str(root), "state_dir": str(state), "moved_legacy": str(moved) if moved else None, "platform": platform, "scope": scope,
                        "settings": str(target) if target else None, "touched": [c._asdict() for c in done]})
            return
        if moved is not None:
            typer.echo(f"moved {legacy_state_dir(root)} to {moved} (out of reach of git clean and git stash)")
        typer.echo(f"state directory: {state}")
        if chosen is not None:
            typer.echo(f"{chosen.name} hooks installed in {target}")
        typer.echo("touched:" if done else "nothing changed: already set up")
        for line in footprint.render(done):
            typer.echo(line)
        if chosen is not None:
            typer.echo("a watch daemon for this workspace will be started by the first hook call "
                       "(`vacant daemon status` shows it; it exits after 30 min idle)")
            typer.echo(f"next: `vacant doctor --platform {chosen.name}` checks that the hooks will fire")
