"""A recorded run as OpenTelemetry traces (OTLP over http/protobuf), following the GenAI
semantic conventions for agent and tool spans.

One trace per run:
  `vacant.run`                               root: the run (run id, platform, workspace)
    `invoke_agent <name>`                    one per agent: provider, agent name, model, conversation id
      `execute_tool <tool>`                  one per step: tool name, tool call id, safe arguments
        events `vacant.read`, `vacant.change`  what the step read and changed (paths and sizes only)
        event  `gen_ai.evaluation.result`      a finding graded on this step: level, step, rerun command
      `invoke_agent <sub-agent>`             under the Agent/Task call that started it
    `vacant.out_of_band <step>`              a change set no recorded step made (no actor)

Span and event times are the step log's. Trace and span ids derive from the run id and step
numbers, so exporting a run twice sends the same ids (a backend may keep or merge duplicates).

Contract: only the model's fields leave (see `vacant.export.model`); nothing reads a blob. The
OpenTelemetry SDK is the optional extra `vacant[otel]`; this module imports it when called, never
on the hook path, and says how to install it when it is missing.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import xxhash

from vacant import __version__
from vacant.export.model import (
    Agent,
    ExportError,
    GradedFinding,
    Read,
    RunModel,
    ToolCall,
)

TRACES_PATH = "/v1/traces"
INSTALL_HINT = "the OpenTelemetry exporter is not installed: pip install 'vacant[otel]'"


@dataclass(frozen=True)
class SentTrace:
    endpoint: str
    trace_id: str
    spans: int
    events: int
    seconds: float


def endpoint_for(url: str) -> str:
    """A collector base URL gets the OTLP traces path; a URL already ending in it is kept."""
    url = url.rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise ExportError(f"--otlp wants an http(s) URL of an OTLP/HTTP collector, not {url!r}")
    return url if url.endswith(TRACES_PATH) else url + TRACES_PATH


def trace_id_of(run: str) -> int:
    return xxhash.xxh3_128_intdigest(f"vacant-run:{run}".encode()) or 1


def span_id_of(run: str, label: str) -> int:
    return xxhash.xxh3_64_intdigest(f"{run}/{label}".encode()) or 1


def _ns(seconds: float) -> int:
    return int(round(seconds * 1e9))


def _otel() -> SimpleNamespace:
    """The SDK modules, imported here only: an optional, heavy dependency off the hook path."""
    try:
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
            OTLPSpanExporter,
        )
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
            InMemorySpanExporter,
        )
        from opentelemetry.sdk.trace.id_generator import IdGenerator
    except ImportError as error:
        raise ExportError(f"{INSTALL_HINT} ({error.name} is missing)") from None
    return SimpleNamespace(trace=trace, OTLPSpanExporter=OTLPSpanExporter, Resource=Resource,
                           TracerProvider=TracerProvider, SimpleSpanProcessor=SimpleSpanProcessor,
                           SpanExportResult=SpanExportResult, InMemorySpanExporter=InMemorySpanExporter,
                           IdGenerator=IdGenerator)


class _Spans:
    """Builds the run's spans with fixed ids into an in-memory exporter (nothing is sent yet)."""

    def __init__(self, model: RunModel) -> None:
        otel = _otel()
        self.trace = otel.trace
        self.model = model
        run = model.run

        class FixedIds(otel.IdGenerator):  # type: ignore[misc, name-defined]
            next_span = 1

            def generate_trace_id(self) -> int:
                return trace_id_of(run)

            def generate_span_id(self) -> int:
                return self.next_span

        self.ids = FixedIds()
        self.memory = otel.InMemorySpanExporter()
        attributes = {"service.name": "vacant", "service.version": __version__, "vacant.run": run}
        self.provider = otel.TracerProvider(resource=otel.Resource.create(attributes), id_generator=self.ids)
        self.provider.add_span_processor(otel.SimpleSpanProcessor(self.memory))
        self.tracer = self.provider.get_tracer("vacant.export", __version__)
        self.spans: dict[str, Any] = {}
        self.events = 0

    def start(self, label: str, name: str, parent: Any, begin: float, attributes: dict[str, Any]) -> Any:
        self.ids.next_span = span_id_of(self.model.run, label)
        context = self.trace.set_span_in_context(parent) if parent is not None else None
        span = self.tracer.start_span(name, context=context, kind=self.trace.SpanKind.INTERNAL,
                                      attributes=_clean(attributes), start_time=_ns(begin))
        self.spans[label] = span
        return span

    def event(self, span: Any, name: str, ts: float, attributes: dict[str, Any]) -> None:
        span.add_event(name, attributes=_clean(attributes), timestamp=_ns(ts))
        self.events += 1

    def finished(self) -> list[Any]:
        self.provider.shutdown()
        return list(self.memory.get_finished_spans())


def _clean(attributes: dict[str, Any]) -> dict[str, Any]:
    """OTel attributes take scalars and homogeneous lists; None means absent."""
    clean: dict[str, Any] = {}
    for key, value in attributes.items():
        if value is None:
            continue
        if isinstance(value, (list, tuple)):
            value = [str(item) for item in value]
        clean[key] = value
    return clean


def build_spans(model: RunModel) -> tuple[list[Any], int]:
    """The run's finished spans (SDK ReadableSpans) and how many events they carry."""
    spans = _Spans(model)
    root = spans.start("run", "vacant.run", None, model.start, {
        "vacant.run": model.run, "vacant.platform": model.platform, "vacant.workspace": model.workspace,
        "gen_ai.conversation.id": model.session, "openinference.span.kind": "CHAIN",
    })
    pending = sorted(model.agents.values(), key=lambda agent: (agent.parent_step is not None, agent.start))
    for agent in pending:
        _agent_span(spans, model, agent, root)
    for call in sorted(model.calls.values(), key=lambda c: c.step):
        _tool_span(spans, model, call, root)
    for finding in model.findings:
        _finding_event(spans, model, finding)
    for label, span in reversed(list(spans.spans.items())):
        span.end(end_time=_ns(_end_of(model, label)))
    return spans.finished(), spans.events


def _end_of(model: RunModel, label: str) -> float:
    kind, _, key = label.partition(":")
    if kind == "agent":
        return model.agents[key].end
    if kind == "step":
        return model.calls[int(key)].end
    return model.end


def _agent_span(spans: _Spans, model: RunModel, agent: Agent, root: Any) -> None:
    parent = root
    if agent.parent_step is not None and agent.parent_step in model.calls:
        parent = _tool_span(spans, model, model.calls[agent.parent_step], root)
    span = spans.start(f"agent:{agent.key}", f"invoke_agent {agent.definition}", parent, agent.start, {
        "gen_ai.operation.name": "invoke_agent", "gen_ai.provider.name": model.provider,
        "gen_ai.system": model.provider, "gen_ai.agent.name": agent.definition, "gen_ai.agent.id": agent.key,
        "gen_ai.request.model": agent.model, "gen_ai.conversation.id": model.session,
        "vacant.platform": model.platform, "openinference.span.kind": "AGENT",
    })
    for read in agent.reads:
        _read_event(spans, span, read)


def _tool_span(spans: _Spans, model: RunModel, call: ToolCall, root: Any) -> Any:
    label = f"step:{call.step}"
    if label in spans.spans:
        return spans.spans[label]
    if call.out_of_band:
        span = spans.start(label, f"vacant.out_of_band {call.step}", root, call.start,
                           {"vacant.step": call.step, "vacant.actor": "none"})
    else:
        parent = spans.spans.get(f"agent:{call.agent}")
        if parent is None:  # an Agent call whose own agent span is not built yet
            _agent_span(spans, model, model.agents[str(call.agent)], root)
            parent = spans.spans[f"agent:{call.agent}"]
        span = spans.start(label, f"execute_tool {call.tool}", parent, call.start, {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call.tool,
            "gen_ai.tool.call.id": call.call_id, "gen_ai.tool.type": "function",
            "gen_ai.tool.call.arguments": json.dumps(call.arguments, sort_keys=True) if call.arguments else None,
            "gen_ai.agent.id": call.agent, "vacant.step": call.step, "vacant.outcome": call.outcome,
            "vacant.exit_code": call.exit_code, "openinference.span.kind": "TOOL",
        })
        if call.outcome in ("failed", "not-run"):
            span.set_attribute("error.type", call.outcome)
            span.set_status(spans.trace.Status(spans.trace.StatusCode.ERROR, call.outcome))
    for read in call.reads:
        _read_event(spans, span, read)
    for change in call.changes:
        spans.event(span, "vacant.change", change.ts, {
            "vacant.change.added": list(change.added), "vacant.change.changed": list(change.changed),
            "vacant.change.removed": list(change.removed),
        })
    return span


def _read_event(spans: _Spans, span: Any, read: Read) -> None:
    spans.event(span, "vacant.read", read.ts, {
        "vacant.read.origin": read.origin, "vacant.read.ref": read.ref, "vacant.read.size": read.size,
        "vacant.read.object": read.object,
    })


def _finding_event(spans: _Spans, model: RunModel, finding: GradedFinding) -> None:
    target = spans.spans.get(f"step:{finding.step}") or spans.spans["run"]
    where = f"{finding.path}:{finding.line}" if finding.path and finding.line else (finding.path or "(no location)")
    level = finding.level or "ungraded"
    spans.event(target, "gen_ai.evaluation.result", finding.ts, {
        "gen_ai.evaluation.name": f"vacant.{finding.source}.{finding.name}",
        "gen_ai.evaluation.score.label": level,
        "gen_ai.evaluation.explanation": f"{finding.source} {finding.name} fails at {where}; level {level}"
                                         + (f", step {finding.step}" if finding.step is not None else ", no step"),
        "vacant.finding.id": finding.id, "vacant.finding.level": level, "vacant.finding.step": finding.step,
        "vacant.finding.flip_step": finding.flip_step, "vacant.finding.path": finding.path,
        "vacant.finding.line": finding.line, "vacant.finding.lineage_source": finding.lineage_source,
        "vacant.finding.rerun": finding.rerun, "vacant.finding.standing": finding.standing,
    })


def send(model: RunModel, url: str, headers: dict[str, str] | None = None, timeout_s: float = 10.0) -> SentTrace:
    """Build the run's spans and send them in one OTLP/HTTP request; raise ExportError on failure.
    `headers` None lets the exporter read OTEL_EXPORTER_OTLP_(TRACES_)HEADERS."""
    endpoint = endpoint_for(url)
    started = time.monotonic()
    spans, events = build_spans(model)
    otel = _otel()
    exporter = otel.OTLPSpanExporter(endpoint=endpoint, headers=headers, timeout=timeout_s)
    try:
        result = exporter.export(spans)
    finally:
        exporter.shutdown()
    if result != otel.SpanExportResult.SUCCESS:
        raise ExportError(f"the collector at {endpoint} did not accept the trace (see the exporter's log above); "
                          "check the URL, the headers and that it speaks OTLP over HTTP")
    return SentTrace(endpoint, f"{trace_id_of(model.run):032x}", len(spans), events,
                     round(time.monotonic() - started, 3))
