"""`vacant uninstall [--platform P] [--scope S] [--all] [--json]`: vacant's hooks out again, from
every scope unless one is named, restoring each settings file byte for byte when nothing else in
it changed; directories the install created are removed when empty. `--all` also removes the
workspace's state directory (the recorded runs) and its `refs/vacant/*` refs, and says what remains in the user's directories.
Every file it touched is listed."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Optional

import typer

from vacant.commands import footprint
from vacant.commands.common import print_json, refuse_inside_agent, workspace
from vacant.commands.init import check_scope
from vacant.core.locations import (
    read_install,
    state_dir,
    unregister,
    user_config_dir,
    user_data_dir,
    write_install,
)
from vacant.daemon import lifecycle
from vacant.platforms.all_platforms import PLATFORMS, load
from vacant.share.gitstore import GitStore


def _remove_hooks(root, platform, scopes: list[str]) -> list[str]:
    removed = []
    for scope in scopes:
        target = platform.uninstall(root, scope)
        if target:
            removed.append(str(target))
    return removed


def _delete_refs(root) -> list[str]:
    """This repository's refs/vacant/* (shared records, `vacant sync`); none outside a git repository."""
    store = GitStore(root)
    return store.delete_namespace() if store.is_repository() else []


def forget_hooks(root, names: list[str]) -> None:
    """The person took these hooks out: their absence is no longer news (`hooks_missing`, doctor)."""
    record = read_install(root)
    if record is None or not set(names) & set(record.get("hooks") or {}):
        return
    record["hooks"] = {name: entry for name, entry in record["hooks"].items() if name not in names}
    record["walls"] = {name: on for name, on in (record.get("walls") or {}).items() if name not in names}
    write_install(root, record)


def _drop_tally_when_no_hooks_left(root: Path) -> None:
    """No hook of any platform left here: the record's tally (vacant/core/tally.py, taken by init)
    goes with the last one, so an uninstall leaves the person's files as they were; `vacant init`
    takes it afresh."""
    record = read_install(root)
    if record is not None and record.get("hooks"):
        return
    from vacant.core.tally import tally_path

    tally = Path(tally_path(root))
    for path in (tally, Path(f"{tally}.lock")):
        path.unlink(missing_ok=True)
    try:
        tally.parent.rmdir()  # only when empty
    except OSError:
        pass


def register(app: typer.Typer) -> None:
    @app.command("uninstall")
    def uninstall_command(
        platform: Optional[str] = typer.Option(None, "--platform", metavar="NAME",
                                               help="Only this platform's hooks (default: every platform's)."),
        scope: Optional[str] = typer.Option(None, "--scope", metavar="SCOPE",
                                            help="Only this scope (default: every scope)."),
        everything: bool = typer.Option(False, "--all", help="Also remove this workspace's recorded runs "
                                                             "(its state directory) and its refs/vacant/* refs."),
        as_json: bool = typer.Option(False, "--json", help="Print what was touched as one JSON object."),
    ) -> None:
        """Remove exactly vacant's hooks (every platform and scope unless named); --all removes every trace here."""
        refuse_inside_agent("uninstall")
        root = workspace()
        chosen = [load(platform)] if platform else [p for p in PLATFORMS.values() if p.scopes]
        if scope is not None:
            for one in chosen:
                check_scope(one, scope)
        files = [path for one in chosen for path in one.files(root)]
        before = footprint.snapshot(footprint.candidates(root, files))
        removed = []
        for one in chosen:
            scopes = [scope] if scope else list(one.scopes)
            removed += _remove_hooks(root, one, scopes)
        forget_hooks(root, [one.name for one in chosen])
        _drop_tally_when_no_hooks_left(root)
        footprint.remove_created_dirs(root)
        if not everything:
            from vacant.core.seal import reseal

            reseal(root)  # what it removed is no longer held (vacant/core/seal.py)
        stopped = lifecycle.stop(root)
        records: list[str] = []
        refs: list[str] = []
        if everything:
            state = state_dir(root)
            if state.exists():
                records.append(str(state))
            shutil.rmtree(state, ignore_errors=True)
            unregister(root)  # the person removed it: the hooks no longer treat it as installed
            refs = _delete_refs(root)
        done = footprint.changes(before, footprint.candidates(root, files))
        remaining = [str(path) for path in (user_data_dir(), user_config_dir()) if path.exists()]
        if as_json:
            print_json({"workspace": str(root), "removed_from": removed, "daemon_stopped": stopped,
                        "touched": [c._asdict() for c in done],
                        "remaining_outside": remaining if everything else None,
                        "removed_state": records, "removed_refs": refs})
            return
        typer.echo("\n".join(f"removed vacant's hooks from {target}" for target in removed)
                   or "no vacant hooks were installed there")
        if stopped:
            typer.echo("stopped the workspace's watch daemon")
        for line in footprint.render(done):
            typer.echo(line)
        for path in records:
            typer.echo(f"removed the recorded runs: {path}")
        if refs:
            typer.echo(f"removed {len(refs)} shared-record ref(s) here (the remote keeps its copies: "
                       "`git push REMOTE --delete REF` for each):")
            for ref in refs:
                typer.echo(f"  {ref}")
        if everything:
            typer.echo("left outside this workspace (shared by all your workspaces; remove by hand if you want):")
            typer.echo(f"  {user_data_dir()}  (reputation table, install records)")
            typer.echo(f"  {user_config_dir()}  (your signing key: flags and answers you signed stop verifying)")
