"""`vacant doctor [--platform P] [--json]`: are vacant's hooks installed, valid, enabled, trusted
and fast? Each line is ok, warn (advice) or fail; only a fail — a broken install, or none — makes
it exit non-zero."""

from __future__ import annotations

import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import typer

from vacant.commands import daemon as daemon_cmd
from vacant.commands.common import print_json, workspace
from vacant.core.exitcodes import Exit
from vacant.core.locations import read_install, state_dir
from vacant.hook import bundle
from vacant.platforms.all_platforms import DEFAULT, load, names
from vacant.platforms.lean_registry import project_env
from vacant.platforms.base import Diagnosis, advice, diagnosis
from vacant.platforms.settings_file import hook_command
from vacant.policy.contract.contract import CONTRACT_FILE, ContractError, load_contract
from vacant.core.installcheck import entry_intact, on_path, package_digest
from vacant.record.hookwatch import hooks_present

SLOW_RATIO = 10.0  # a hook call costing more than this many bare interpreter starts
MARKS = {"ok": "[ok]", "warn": "[warn]", "fail": "[!!]"}


def interpreter_startup_ms(runs: int = 5) -> tuple[float, float]:
    """Median wall time of one hook call as installed (the launcher, -I -S) on an event the
    recorder ignores, in a scratch directory of its own; and of a bare `python -I -S -c pass`
    measured alternately in the same run (a busy machine slows both alike)."""
    command = shlex.split(hook_command(DEFAULT))
    hook, bare = [], []
    with tempfile.TemporaryDirectory(prefix="vacant-doctor-") as scratch:
        env = {**os.environ, **project_env(DEFAULT, scratch)}
        for _ in range(runs):
            for argv, stdin, into in ((command, b'{"hook_event_name": "Notification"}', hook),
                                      ([sys.executable, "-I", "-S", "-c", "pass"], b"", bare)):
                started = time.perf_counter()
                subprocess.run(argv, input=stdin, cwd=scratch, env=env, capture_output=True, check=False)
                into.append((time.perf_counter() - started) * 1000)
    return statistics.median(hook), statistics.median(bare)


def _interpreter_line() -> Diagnosis:
    ms, bare = interpreter_startup_ms()
    detail = (f"{sys.executable} (one hook call as installed: {ms:.0f} ms median; a bare interpreter: "
              f"{bare:.0f} ms, {ms / max(bare, 0.1):.1f}x)")
    if ms > bare * SLOW_RATIO:
        return advice("interpreter", detail + ": slow; every tool call pays it")
    return diagnosis("interpreter", True, detail)


def _daemon_line() -> Diagnosis:
    """The workspace's watch daemon: absent is fine (the next hook call starts one); running but
    deaf, or watching only part of the tree, is advice."""
    report = daemon_cmd.status(workspace())
    detail = "; ".join(line.removeprefix("daemon: ") for line in daemon_cmd.describe(report))  # the check's name says it
    if not report["running"]:
        return diagnosis("daemon", True, detail)
    if "error" in report or not report.get("watching"):
        return advice("daemon", detail)
    return diagnosis("daemon", True, detail)


def bundle_line(package: Path | None = None) -> Diagnosis:
    """The hot bundle a call answered without the daemon loads vacant's modules from
    (vacant/hook/bundle.py): missing or stale is advice (such a call is a few ms slower, never wrong)."""
    package = bundle.package_root() if package is None else package
    path = bundle.bundle_path(package)
    if bundle.fresh(package):
        return diagnosis("hot bundle", True, f"{path}: fresh")
    writable = os.access(path.parent if path.parent.is_dir() else path.parent.parent, os.W_OK)
    if not writable:
        return advice("hot bundle", f"{path} cannot be written (a read-only install): a call answered without "
                                    "the daemon imports each of vacant's modules, a few ms slower")
    state = "stale (a source changed since it was built)" if path.exists() else "missing"
    return advice("hot bundle", f"{path} is {state}: the next daemon start (or `vacant init`) builds it; until "
                                "then a call answered without the daemon is a few ms slower")


def key_line() -> Diagnosis:
    """The person's signing key: one name, readable (a hard link elsewhere is a fail: it reads the
    key where no wall hides it; vacant/core/keys.py refuses such a key everywhere)."""
    from vacant.core.keys import KeyFileError, KeyMissing, key_path, user_key

    try:
        user_key()
    except KeyMissing as error:
        return advice("key", str(error))
    except (KeyFileError, OSError) as error:
        return diagnosis("key", False, str(error))
    return diagnosis("key", True, f"{key_path()}: one name, mode 0600")


def libraries_line() -> Diagnosis:
    """The hook path's libraries (xxhash, watchdog) as this interpreter finds them, against the
    versions this release was tested with (core/tested_with.py): another version is advice (it
    may work; watchdog changed what the daemon relies on within a minor release before), a
    missing one a fail (nothing records without them)."""
    from importlib.metadata import PackageNotFoundError, version

    from vacant.core.tested_with import TESTED_WITH

    found: dict[str, str | None] = {}
    for name in TESTED_WITH:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    missing = [name for name, have in found.items() if have is None]
    if missing:
        return diagnosis("libraries", False, f"{', '.join(missing)} not installed for {sys.executable}: "
                                             "reinstall vacant (nothing is recorded without them)")
    other = [name for name, have in found.items() if have != TESTED_WITH[name]]
    if other:
        return advice("libraries", "; ".join(f"{name} {found[name]} is installed, this release was tested with "
                                             f"{TESTED_WITH[name]}" for name in other)
                      + f": if hooks misbehave, `{sys.executable} -m pip install "
                      + " ".join(f"'{name}=={TESTED_WITH[name]}'" for name in other) + "`")
    return diagnosis("libraries", True, ", ".join(f"{name} {found[name]}" for name in found)
                     + ": the versions this release was tested with")


def contract_line(root) -> Diagnosis:
    """vacant.toml reads (a fail when it does not: every Stop would block on it, verifying nothing)."""
    try:
        contract = load_contract(root)
    except ContractError as error:
        return diagnosis("contract", False, f"{error}: every Stop blocks on it and verifies nothing until it is fixed")
    if contract is None:
        return diagnosis("contract", True, f"no {CONTRACT_FILE}: a Stop verifies only flags "
                                           "(`vacant contract add` adds checks and guards)")
    return diagnosis("contract", True, f"{CONTRACT_FILE}: {len(contract.guards)} guard(s), "
                                       f"{len(contract.check)} acceptance check(s)")


def install_lines(root, platform: str) -> list[Diagnosis]:
    """The install record against the disk: where the state and the error log are, and whether the
    hooks `vacant init` installed are still there (`git clean -fdx`, `git stash -u` remove them)."""
    record = read_install(root)
    if record is None:
        return [diagnosis("installed", False, f"vacant was never installed in {root}: nothing is recorded here "
                                              f"until `vacant init --platform {platform}`")]
    lines = [diagnosis("state directory", True, f"{state_dir(root)} (errors: {state_dir(root) / 'errors.log'})")]
    entry = (record.get("hooks") or {}).get(platform)
    if entry:
        path = entry.get("path", "")
        kept = entry_intact(entry) if isinstance(entry, dict) else hooks_present(path)
        lines.append(diagnosis("hooks kept", kept, f"{path} still holds exactly the hooks vacant init wrote" if kept
                               else f"{path} no longer holds exactly the hooks vacant init wrote (deleted, cleaned or "
                               "edited: a changed command or matcher counts): nothing is trusted until "
                               f"`vacant init --platform {platform}` runs again"))
    return lines + installed_package_lines(record)


def installed_package_lines(record: dict) -> list[Diagnosis]:
    """The package and the `vacant` on PATH, against what the install recorded."""
    lines = []
    package = record.get("package")
    if isinstance(package, dict) and package.get("digest"):
        same = package_digest() == package["digest"]
        lines.append(diagnosis("package", same, "vacant's installed files are the ones `vacant init` recorded" if same
                               else f"vacant's installed files ({package.get('path')}) changed since `vacant init`: "
                               "reinstall vacant, then run `vacant init` again"))
    recorded = record.get("vacant_on_path")
    if isinstance(recorded, dict):
        now = on_path()
        same = now == recorded
        lines.append(diagnosis("vacant on PATH", same, f"{now['path']} is the one `vacant init` recorded" if same else
                               f"`vacant` on PATH is now {now['path']} (digest {str(now['digest'])[:12]}), not the "
                               f"{recorded.get('path')} recorded at install: a shim may answer in its place"))
    return lines


def wall_lines(root, platform) -> list[Diagnosis]:
    """The wall (vacant/core/wall.py): on and in place, its Debian packages there (a fail while
    they are missing: the sandbox would not start); off (`--no-wall`) is said, as advice."""
    from vacant.core.wall import missing_packages, wall_for

    record = read_install(root) or {}
    walled = (record.get("walls") or {}).get(platform.name)
    if walled is None:
        return []  # not installed by `vacant init` (or before the wall): install_lines speaks for it
    if walled is False:
        return [advice("wall", f"off for {platform.name} (`vacant init --no-wall`, or no sandbox vacant configures): "
                               "the agent's commands can reach vacant's key, state and settings; the record is unwalled")]
    lines = []
    missing = missing_packages()
    lines.append(diagnosis("wall packages", not missing, "bubblewrap and socat are installed" if not missing else
                           f"the wall needs {' '.join(missing)}: `sudo apt-get install {' '.join(missing)}` "
                           "(until then the agent's sandbox refuses to start)"))
    problem = platform.wall_problem(root, wall_for(root)) if hasattr(platform, "wall_problem") else None
    lines.append(diagnosis("wall", problem is None, problem or f"{platform.name}'s sandbox hides vacant's key, state "
                           "and daemon files and keeps the hook settings and the install read-only"))
    return lines


def record_line(root) -> Diagnosis:
    """The record against its tally (vacant/core/tally.py): what was lost behind vacant's back (a
    ledger reset, a run deleted, run.json edited, the tally gone) is a fail, kept until `vacant
    init` accepts the record as it is; an install from before the tally is advice."""
    from vacant.core import tally

    record = read_install(root)
    if record is None:
        return advice("record", "vacant is not installed here: no record to check")
    if not record.get("tally"):
        return advice("record", "this install has no tally of its record (made before it): `vacant init` again takes "
                                "one, and every hook call then says a loss of the record")
    try:
        losses, _data = tally.check(root, state_dir(root), tally.person_key())
    except tally.NoKey as error:
        return diagnosis("record", False, f"the record cannot be checked: {error}")
    if losses:
        return diagnosis("record", False, "lost behind vacant's back: " + "; ".join(losses) + " (every ACT call is "
                         "held until the person looks; `vacant init` again accepts the record as it is)")
    return diagnosis("record", True, "the ledgers, runs and run states are as vacant last wrote them")


def register(app: typer.Typer) -> None:
    @app.command("doctor")
    def doctor_command(
        platform: str = typer.Option(DEFAULT, "--platform", metavar="NAME", help=", ".join(names(hooked_only=True)) + "."),
        as_json: bool = typer.Option(False, "--json", help="One JSON object: every line with its status."),
    ) -> None:
        """Say whether vacant's hooks are installed, valid and would actually fire (warnings exit 0)."""
        chosen = load(platform)
        root = workspace()
        report = [*chosen.doctor(root, hook_command(chosen.name)), *install_lines(root, chosen.name),
                  contract_line(root), record_line(root), *wall_lines(root, chosen), _daemon_line(), bundle_line(), key_line(), libraries_line(), _interpreter_line()]
        failed = any(line.status == "fail" for line in report)
        if as_json:
            print_json({"platform": chosen.name, "ok": not failed, "lines": [line._asdict() for line in report]})
        else:
            for line in report:
                typer.echo(f"{MARKS[line.status]} {line.name}: {line.detail}")
        if failed:
            raise typer.Exit(int(Exit.FAILED))
