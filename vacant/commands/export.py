"""`vacant export RUN --otlp URL | --agent-trace FILE`: send a run to an OpenTelemetry collector,
or write it as an Agent Trace record. See docs/EXPORT.md."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Optional

import typer

from vacant.commands.common import print_json, workspace
from vacant.core.locations import resolve_run
from vacant.export import agent_trace, model, otlp
from vacant.export.model import ExportError
from vacant.store.states import store_for


def _headers(pairs: list[str]) -> dict[str, str] | None:
    if not pairs:
        return None  # the exporter then reads OTEL_EXPORTER_OTLP_HEADERS itself
    headers: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise ExportError(f"--header wants NAME=VALUE, not {pair!r}")
        headers[name.strip()] = value.strip()
    return headers


def _write_trace(trace: dict[str, Any], target: str) -> str:
    if target == "-":
        sys.stdout.write(json.dumps(trace, indent=1) + "\n")
        return "stdout"
    agent_trace.write(trace, Path(target))
    return target


def register(app: typer.Typer) -> None:
    @app.command("export")
    def export_command(
        run: Optional[str] = typer.Argument(None, help="Run id or prefix (default: the latest)."),
        otlp_url: Optional[str] = typer.Option(None, "--otlp", metavar="URL", help="OTLP/HTTP collector URL (…/v1/traces added)."),
        header: list[str] = typer.Option([], "--header", metavar="NAME=VALUE", help="NAME=VALUE sent with the OTLP request (repeatable)."),
        timeout: float = typer.Option(10.0, "--timeout", metavar="SECONDS", help="Seconds to wait for the collector."),
        trace_file: Optional[str] = typer.Option(None, "--agent-trace", metavar="FILE",
                                                 help="Write an Agent Trace record to a new FILE (- for stdout)."),
        as_json: bool = typer.Option(False, "--json", help="Print what was exported as JSON."),
    ) -> None:
        """Send a run as OpenTelemetry traces, or write it as an Agent Trace record."""
        if not otlp_url and not trace_file:
            raise ExportError("say where to: --otlp URL (an OpenTelemetry collector) and/or --agent-trace FILE")
        if as_json and trace_file == "-":
            raise ExportError("--json and --agent-trace - both write to stdout: give the record a file name")
        root = workspace()
        run_dir = resolve_run(root, run)
        recorded = model.load(run_dir)
        result: dict[str, Any] = {"run": recorded.run}
        if otlp_url:
            sent = otlp.send(recorded, otlp_url, _headers(header), timeout)
            result["otlp"] = {"endpoint": sent.endpoint, "trace_id": sent.trace_id, "spans": sent.spans,
                              "events": sent.events, "seconds": sent.seconds}
        if trace_file:
            trace = agent_trace.record(recorded, store_for(root), root)
            where = _write_trace(trace, trace_file)
            result["agent_trace"] = {"file": where, "id": trace["id"], "files": len(trace["files"])}
        if as_json:
            print_json(result)
            return
        if "otlp" in result:
            sent_info = result["otlp"]
            typer.echo(f"run {recorded.run}: {sent_info['spans']} spans, {sent_info['events']} events sent to "
                       f"{sent_info['endpoint']} (trace {sent_info['trace_id']}) in {sent_info['seconds']} s",
                       err=trace_file == "-")
        if "agent_trace" in result and trace_file != "-":
            info = result["agent_trace"]
            typer.echo(f"run {recorded.run}: Agent Trace record {info['id']} ({info['files']} file(s)) written to {info['file']}")
