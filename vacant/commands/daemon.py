"""`vacant daemon start|stop|status [--json]`: the workspace's watch daemon by hand (the hooks
start it on their own: the session-start hook, and the first client that finds none)."""

from __future__ import annotations

import time

import typer

from vacant.commands.common import print_json, workspace
from vacant.core.exitcodes import Exit
from vacant.daemon import lifecycle
from vacant.hook.paths import info, spawn
from vacant.daemon.watcher import max_user_watches

START_WAIT_S = 20.0


def status(root) -> dict[str, object]:
    """What `status` and `doctor` report: running or not, and the live daemon's own figures."""
    if not lifecycle.running(root):
        return {"running": False, "root": str(root)}
    try:
        live = lifecycle.ask_status(root, timeout=5)
    except (OSError, ValueError) as error:
        return {"running": True, "root": str(root), "error": f"not answering: {error}"}
    live.pop("status", None)
    return {"running": True, **live, "port": (info(root) or {}).get("port")}


def describe(report: dict[str, object]) -> list[str]:
    if not report["running"]:
        return ["daemon: not running (the next hook call starts one)"]
    if "error" in report:
        return [f"daemon: running but {report['error']}"]
    rescan = report.get("last_rescan") or {}
    limit = report.get("max_user_watches") or max_user_watches()
    return [f"daemon: pid {report['pid']}, http 127.0.0.1:{report['port']}, {report['requests']} requests, "
            f"idle {report['idle_s']} s, rss {report['rss_kb']} kB",
            f"watches: {report['watches']} of fs.inotify.max_user_watches {limit}"
            + ("" if report["watching"] else " (not watching: every full scan is a recorded rescan)"),
            "last rescan: " + (f"{time.strftime('%H:%M:%S', time.localtime(rescan['at']))}: {rescan['why']} "
                               f"({rescan['files']} files, {rescan['seconds']} s)" if rescan else "none")]


def register(app: typer.Typer) -> None:
    daemon_app = typer.Typer(help="The workspace's watch daemon (started by the hooks on their own).")
    app.add_typer(daemon_app, name="daemon")

    @daemon_app.command("start")
    def start_command(as_json: bool = typer.Option(False, "--json")) -> None:
        """Start the daemon (detached) and wait until it answers."""
        root = workspace()
        if not lifecycle.running(root):
            (lifecycle.daemon_dir(root) / "spawned").unlink(missing_ok=True)  # asked for by hand: no grace
            spawn(root, "vacant daemon start")
        deadline = time.monotonic() + START_WAIT_S
        while time.monotonic() < deadline and not status(root).get("pid"):
            time.sleep(0.05)
        report = status(root)
        print_json(report) if as_json else typer.echo("\n".join(describe(report)))
        if not report.get("pid"):
            raise typer.Exit(int(Exit.FAILED))

    @daemon_app.command("stop")
    def stop_command(as_json: bool = typer.Option(False, "--json")) -> None:
        """Stop the daemon (the next hook call starts a new one)."""
        stopped = lifecycle.stop(workspace())
        print_json({"stopped": stopped}) if as_json else typer.echo("daemon stopped" if stopped else "no daemon was running")

    @daemon_app.command("status")
    def status_command(as_json: bool = typer.Option(False, "--json")) -> None:
        """Whether it runs, its watches against the kernel's limit, its last rescan and why."""
        report = status(workspace())
        print_json(report) if as_json else typer.echo("\n".join(describe(report)))
