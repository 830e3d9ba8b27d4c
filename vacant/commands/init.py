"""`vacant init [--platform P] [--scope S] [--json]`: the workspace's state directory, and with a
platform, vacant's hooks in that platform's settings. Every file it touched is listed, inside the
workspace or not; a bad platform or scope changes nothing."""

from __future__ import annotations

from typing import Optional

import typer

from vacant.commands import footprint
from vacant.commands.common import print_json
from vacant.core.seal import reseal
from vacant.core.wall import ensure_hidden_dirs, missing_packages, wall_for
from vacant.core.locations import user_data_dir, ensure_state_dir, legacy_state_dir, mark_installed, migrate_legacy, new_root, state_dir
from vacant.daemon import lifecycle
from vacant.hook import bundle
from vacant.platforms.all_platforms import load, names
from vacant.platforms.settings_file import hook_command

SCOPES = ("local", "project", "user")


def check_scope(platform, scope: str) -> str:
    if scope not in SCOPES or (scope != "local" and scope not in platform.scopes):
        allowed = ", ".join(s for s in SCOPES if s == "local" or s in platform.scopes)
        raise typer.BadParameter(f"{platform.name} takes --scope {allowed}", param_hint="--scope")
    return scope


def walls(platform) -> bool:
    """Whether `platform` has a sandbox of its own that `vacant init` configures (the others are
    walled by `vacant do`, under bubblewrap)."""
    return hasattr(platform, "sandbox_settings")


def _install(platform, root, scope: str, wall):
    """A platform with http hooks (Claude) also gets, in its local settings, http hooks to the
    workspace daemon's fixed port where the call decides nothing (see platforms/claude.py HTTP_EVENTS)."""
    extra = {"wall": wall} if wall is not None else {}
    # measured on Claude 2.1.197: with its sandbox on, its http hooks to 127.0.0.1 never reach the
    # daemon (every PostToolUse lost); walled, every event goes through the command hook instead
    if platform.http_hooks and scope == "local" and wall is None:
        config = lifecycle.ensure_config(root)
        http = {"url": f"http://127.0.0.1:{config['port']}/hook/{platform.name}", "token": config["secret"]}
        return platform.install(root, scope, hook_command(platform.name, scope), http=http, **extra)
    return platform.install(root, scope, hook_command(platform.name, scope), **extra)


def build_wall(root, platform):
    """The wall around `root`, its hidden directories created first (a sandbox hides only what
    exists when it wraps a command); returns (wall, created directories)."""
    made = ensure_hidden_dirs(root)
    user_data_dir().mkdir(parents=True, exist_ok=True)  # read-only in the wall: a directory rule, not a file's
    return wall_for(root, platform.files(root) if platform is not None else []), made


def register(app: typer.Typer) -> None:
    @app.command("init")
    def init_command(
        platform: Optional[str] = typer.Option(None, "--platform", metavar="NAME",
                                               help="Install this platform's hooks: " + ", ".join(names(hooked_only=True)) + "."),
        scope: str = typer.Option("local", "--scope", metavar="SCOPE",
                                  help="local (this machine, not committed), project (committed: a portable "
                                       "`vacant-hook` command) or user (every project of yours)."),
        no_wall: bool = typer.Option(False, "--no-wall", help="Do not configure the platform's sandbox: programs "
                                     "the agent runs can then reach vacant's key, state and settings, and "
                                     "the report, the run view and doctor say the record is unwalled."),
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
        key_made = _make_key()
        walled = chosen is not None and walls(chosen) and not no_wall
        wall, made = build_wall(root, chosen) if walled else (None, [])
        target = _install(chosen, root, scope, wall) if chosen is not None else None
        hooks = {chosen.name: {"path": str(target), "scope": scope}} if chosen is not None and target else {}
        walled_record = _walled_record(root, chosen, walled, no_wall)
        mark_installed(root, hooks=hooks, walls=walled_record)  # hooks record only in an installed workspace
        reseal(root)  # what the wall holds as it is now: the person's init accepts it (vacant/core/seal.py)
        _accept_record(root)  # the record as it is now: what later hook calls compare with (vacant/core/tally.py)
        hot = bundle.ensure() if chosen is not None else None  # the calls answered without a daemon load it
        missing = missing_packages() if walled else []
        state = state_dir(root)
        done = footprint.changes(before, footprint.candidates(root, files))
        footprint.remember_created_dirs(root, done)
        if as_json:
            print_json({"workspace": str(root), "state_dir": str(state), "moved_legacy": str(moved) if moved else None, "platform": platform, "scope": scope,
                        "settings": str(target) if target else None, "touched": [c._asdict() for c in done],
                        "wall": walled, "created_dirs": [str(d) for d in made], "missing_packages": missing,
                        "key_created": str(key_made) if key_made else None,
                        "hot_bundle": str(hot) if hot else None})
            return
        if moved is not None:
            typer.echo(f"moved {legacy_state_dir(root)} to {moved} (out of reach of git clean and git stash)")
        typer.echo(f"state directory: {state}")
        if key_made is not None:
            typer.echo(f"created your signing key {key_made} (0600): your approvals and flags are signed with it")
        if chosen is not None:
            typer.echo(f"{chosen.name} hooks installed in {target}")
            for line in wall_lines(chosen, walled, made, missing):
                typer.echo(line)
        typer.echo("touched:" if done else "nothing changed: already set up")
        for line in footprint.render(done):
            typer.echo(line)
        if hot is not None:
            typer.echo(f"compiled vacant's hook modules into {hot} (a call answered without the daemon loads them from there)")
        if chosen is not None:
            typer.echo("a watch daemon for this workspace will be started by the first hook call "
                       "(`vacant daemon status` shows it; it exits after 30 min idle)")
            typer.echo(f"next: `vacant doctor --platform {chosen.name}` checks that the hooks will fire")


def _accept_record(root) -> None:
    """The person accepts the record as it is now (vacant/core/tally.py). When it lost something
    since vacant last wrote it, every approval not known as spent is void first: a spent-approvals
    ledger reset behind vacant's back must not let one approval run twice once accepted."""
    from vacant.core import tally
    from vacant.core.locations import read_install
    from vacant.policy.gate.asks.answer import void_approvals
    from vacant.policy.gate.asks.book import AskBook

    if (read_install(root) or {}).get("tally"):
        losses, _data = tally.check(root, state_dir(root), tally.person_key())
        if losses:
            voided = void_approvals(AskBook(root), "the record lost something behind vacant's back ("
                                    + "; ".join(losses)[:500] + "): voided when the person ran vacant init")
            typer.echo(f"accepted the record as it is; it had lost: {'; '.join(losses)}"
                       + (f" ({voided} earlier approval(s) voided: approve again what should run)" if voided else ""),
                       err=True)
    tally.accept(root)


def _make_key():
    """The person's signing key, created here if missing (the one place besides a person's command in a
    terminal: vacant/core/keys.py); the path when it was created now, else None."""
    from vacant.core.keys import create_user_key, key_path

    path = key_path()
    if path.exists():
        return None
    create_user_key()
    return path


def _walled_record(root, chosen, walled: bool, no_wall: bool) -> dict:
    """install.json's `walls`: platform -> whether its sandbox was configured (kept per platform)."""
    from vacant.core.locations import read_install

    record = dict((read_install(root) or {}).get("walls") or {})
    if chosen is not None:
        record[chosen.name] = walled
    return record


def wall_lines(chosen, walled: bool, made: list, missing: list[str]) -> list[str]:
    if not walls(chosen):
        return [f"{chosen.name} has no sandbox vacant configures: run it with `vacant do` for the wall (bubblewrap)"]
    if not walled:
        return ["the wall is off (--no-wall): programs the agent runs can reach vacant's key, state and settings; "
                "the record is unwalled"]
    lines = [f"the wall: {chosen.name}'s sandbox hides vacant's key, state and daemon files from every command "
             "the agent runs, and keeps the hook settings and vacant's install read-only"]
    lines += [f"created {directory} (empty, 0700) so the sandbox can hide it" for directory in made]
    if missing:
        lines.append(f"the wall needs these Debian packages, not installed here: {' '.join(missing)} "
                     f"(`sudo apt-get install {' '.join(missing)}`); until then the agent refuses to start its sandbox")
    return lines
