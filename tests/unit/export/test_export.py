"""vacant.export: the run model, line authorship (against an independent oracle), the OTLP span
tree (built in memory; the round trip through a real collector is tests/e2e/test_export.py), the
Agent Trace record against the vendored schema, and the command's errors."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vacant.core.calls import HookCall, Read
from vacant.export import agent_trace, authorship, otlp
from vacant.export import model as run_model
from vacant.export.model import (
    SAFE_ARGUMENTS,
    Change,
    ExportError,
    RunModel,
    ToolCall,
    safe_arguments,
)
from vacant.hook.call import stop_pipeline
from vacant.platforms.claude import PLATFORM
from vacant.record.recorder import Recorder
from vacant.store.objects import ObjectStore
from vacant.store.states import save_manifest, store_for

pytestmark = pytest.mark.usefixtures("isolated_home")

REPO = Path(__file__).resolve().parents[3]
SCHEMA = json.loads((REPO / "fixtures" / "agent-trace" / "trace-record.schema.json").read_text())
TOML = """[[check]]
name = "rate"
command = "test ! -f config.py || grep -q 'RATE = 0.08' config.py || { echo 'config.py:2: RATE is wrong'; exit 1; }"

[stop]
rounds = 0
"""
SECRET = "sk-ant-" + "a1B2" * 8  # redacted by the step log, so never exported
CONTENT = "CONTENT-ONLY-77aa"


def record(ws: Path, monkeypatch) -> Path:
    """A run through the real recorder: a Read, an Agent call whose sub-agent writes notes.md, a
    Write of a wrong config.py, a Bash carrying a secret, a Stop whose check fails."""
    (ws / "vacant.toml").write_text(TOML)
    (ws / "spec.md").write_text("rate 0.08\n")
    rec = Recorder(ws, "s1", PLATFORM)

    def call(kind: str, **fields) -> None:
        recorder = Recorder(ws, "s1", PLATFORM)
        hook_call = HookCall(kind, "s1", ws, model="model-x", **fields)
        recorder.handle(hook_call)
        if kind == "stop":  # what the hook entry does after the recorder
            stop_pipeline(recorder, hook_call)

    call("session_start", source="startup")
    call("tool_pre", tool="Read", tool_input={"file_path": str(ws / "spec.md")}, key="t1", scope=[])
    call("tool_post", tool="Read", tool_input={}, key="t1", scope=[], reads=[Read("file", str(ws / "spec.md"), "rate 0.08\n")])
    call("tool_pre", tool="Agent", tool_input={"prompt": "notes", "subagent_type": "helper"}, key="t2", scope=[])
    call("subagent_start", agent_id="sub1", agent_type="helper")
    sub = {"agent_id": "sub1", "agent_type": "helper"}
    call("tool_pre", tool="Write", tool_input={"file_path": str(ws / "notes.md"), "content": CONTENT}, key="t3",
         scope=[str(ws / "notes.md")], **sub)
    (ws / "notes.md").write_text(f"a\n{CONTENT}\nc\n")
    call("tool_post", tool="Write", tool_input={}, key="t3", scope=[str(ws / "notes.md")], **sub)
    call("tool_post", tool="Agent", tool_input={}, key="t2", scope=[])
    config = f"# config {CONTENT}\nRATE = 0.09\n"  # a Write's input says what it wrote (docs/LEVELS.md)
    call("tool_pre", tool="Write", tool_input={"file_path": str(ws / "config.py"), "content": config}, key="t4",
         scope=[str(ws / "config.py")])
    (ws / "config.py").write_text(config)
    call("tool_post", tool="Write", tool_input={}, key="t4", scope=[str(ws / "config.py")])
    call("tool_pre", tool="Bash", tool_input={"command": f"echo {SECRET}"}, key="t5", scope=None)
    call("tool_post", tool="Bash", tool_input={}, key="t5", scope=None, outcome="failed", exit_code=1)
    call("stop")
    call("session_end", reason="other")
    return rec.log.run_dir


@pytest.fixture
def run_dir(ws, monkeypatch) -> Path:
    return record(ws, monkeypatch)


def test_model_of_a_recorded_run(run_dir):
    built = run_model.load(run_dir)
    assert [(c.step, c.tool, c.agent, c.call_id) for c in built.calls.values()] == [
        (1, "Read", "main", "t1"), (2, "Agent", "main", "t2"), (3, "Write", "sub1", "t3"),
        (4, "Write", "main", "t4"), (5, "Bash", "main", "t5")]
    assert built.agents["sub1"].parent_step == 2 and built.agents["sub1"].definition == "helper"
    assert built.agents["main"].model == "model-x" and built.provider == "anthropic"
    assert all(call.start <= call.end for call in built.calls.values())
    [finding] = built.findings
    assert (finding.level, finding.step, finding.flip_step, finding.path, finding.standing) == \
        ("provable", 4, 4, "config.py", True)
    assert CONTENT not in json.dumps([c.arguments for c in built.calls.values()])


@given(st.dictionaries(st.text(max_size=12) | st.sampled_from(SAFE_ARGUMENTS + ("content", "new_string")),
                       st.text(max_size=3000) | st.integers() | st.booleans() | st.none(), max_size=8))
def test_safe_arguments_keep_only_allow_listed_scalars(tool_input):
    kept = safe_arguments(tool_input)
    assert set(kept) <= set(SAFE_ARGUMENTS)
    for key, value in kept.items():
        original = tool_input[key]
        assert not isinstance(original, bool)
        assert value == original if not isinstance(original, str) or len(original) <= 2000 else len(value) == 2000


# -- line authorship against an independent oracle ---------------------------------------------

EDITS = st.lists(st.tuples(st.integers(1, 4), st.lists(st.tuples(st.booleans(), st.integers(0, 6)), max_size=6)),
                 min_size=1, max_size=6)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(edits=EDITS, baseline_lines=st.integers(0, 5))
def test_line_authors_follow_unique_lines(tmp_path_factory, edits, baseline_lines):
    """Every line is unique, so who wrote each final line is known by construction: the oracle
    tracks tokens, authorship must agree."""
    store = ObjectStore(tmp_path_factory.mktemp("objects"))
    counter = iter(range(10**6))
    lines = [(f"base{next(counter)}", None) for _ in range(baseline_lines)]
    baseline_key = store.put_bytes("".join(f"{text}\n" for text, _ in lines).encode())
    baseline = {"f.txt": ["f", 1, 0, baseline_key, 0o644]} if lines else {}
    calls: dict[int, ToolCall] = {}
    for seq, (step, ops) in enumerate(edits, start=1):
        for insert, at in ops:  # insert a new line, or delete one, at a position
            position = min(at, len(lines))
            if insert:
                lines.insert(position, (f"s{step}l{next(counter)}", step))
            elif lines:
                del lines[min(position, len(lines) - 1)]
        key = store.put_bytes("".join(f"{text}\n" for text, _ in lines).encode())
        change = Change(seq, float(seq), (), ("f.txt",), (), {"f.txt": ("f", 1, 0, key, 0o644)})
        calls.setdefault(step, ToolCall(step, f"t{step}", "Edit", "main", 0.0, 0.0, "ok", None, {})).changes.append(change)
    model = RunModel("r", "claude-code", None, "/ws", save_manifest(store, baseline), 0.0, 1.0, {}, calls, [], [])
    files, skipped = authorship.authors(model, store)
    got = [(line, span.step) for f in files for span in f.spans
           for line in range(span.start, span.end + 1)]
    expected = [(number, step) for number, (_text, step) in enumerate(lines, start=1) if step is not None]
    assert got == expected and skipped == []


# -- OTLP spans (in memory) ---------------------------------------------------------------------

def test_span_tree_follows_the_genai_conventions(run_dir):
    built = run_model.load(run_dir)
    spans, events = otlp.build_spans(built)
    by_name = {span.name: span for span in spans}
    assert sorted(by_name) == sorted(["vacant.run", "invoke_agent main", "invoke_agent helper", "execute_tool Read",
                                      "execute_tool Agent", "execute_tool Bash", "execute_tool Write"])
    writes = [span for span in spans if span.name == "execute_tool Write"]
    parent = {span.context.span_id: span for span in spans}
    assert sorted(parent[w.parent.span_id].name for w in writes) == ["invoke_agent helper", "invoke_agent main"]
    assert parent[by_name["invoke_agent helper"].parent.span_id].name == "execute_tool Agent"
    assert parent[by_name["invoke_agent main"].parent.span_id].name == "vacant.run"
    assert {span.context.trace_id for span in spans} == {otlp.trace_id_of(built.run)}
    bash = by_name["execute_tool Bash"]
    assert bash.attributes["gen_ai.tool.call.id"] == "t5" and bash.status.status_code.name == "ERROR"
    assert by_name["invoke_agent main"].attributes["gen_ai.request.model"] == "model-x"
    evaluations = [e for e in writes_main(spans, parent).events if e.name == "gen_ai.evaluation.result"]
    assert len(evaluations) == len(built.findings) == 1  # on the blamed step's span
    assert evaluations[0].attributes["gen_ai.evaluation.score.label"] == "provable"
    (reported,) = json.loads((run_dir / "report.json").read_text())["findings"]
    assert evaluations[0].attributes["vacant.finding.rerun"] == reported["evidence"]["rerun"]  # what the Stop gave
    assert events == sum(len(span.events) for span in spans)
    dumped = json.dumps([dict(span.attributes) for span in spans] + [dict(e.attributes) for s in spans for e in s.events])
    assert SECRET not in dumped and "REDACTED" in dumped  # the step log's redaction is what leaves
    assert CONTENT not in dumped
    assert all(span.start_time <= span.end_time for span in spans)


def writes_main(spans, parent):
    return next(s for s in spans if s.name == "execute_tool Write" and parent[s.parent.span_id].name == "invoke_agent main")


def test_same_run_gives_the_same_ids(run_dir):
    first = {(s.name, s.context.span_id) for s in otlp.build_spans(run_model.load(run_dir))[0]}
    second = {(s.name, s.context.span_id) for s in otlp.build_spans(run_model.load(run_dir))[0]}
    assert first == second and len({span_id for _, span_id in first}) == len(first)


@pytest.mark.slow
def test_an_unreachable_collector_is_a_clear_error(run_dir):
    with pytest.raises(ExportError, match="did not accept"):
        otlp.send(run_model.load(run_dir), "http://127.0.0.1:9", timeout_s=1.0)


def test_a_missing_extra_says_how_to_install_it(run_dir, monkeypatch):
    monkeypatch.setitem(sys.modules, "opentelemetry.exporter.otlp.proto.http.trace_exporter", None)
    with pytest.raises(ExportError, match=r"pip install 'vacant\[otel\]'"):
        otlp.build_spans(run_model.load(run_dir))


@pytest.mark.parametrize("url, endpoint", [("http://h:4318", "http://h:4318/v1/traces"),
                                           ("https://h/api/public/otel/", "https://h/api/public/otel/v1/traces"),
                                           ("http://h:4318/v1/traces", "http://h:4318/v1/traces")])
def test_endpoint(url, endpoint):
    assert otlp.endpoint_for(url) == endpoint


def test_the_cli_does_not_load_the_sdk():
    code = "import sys, vacant.cli; print([m for m in sys.modules if m.startswith('opentelemetry')])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# -- Agent Trace -----------------------------------------------------------------------------------

def strict(schema):
    """The schema with every object closed (metadata aside): we write only what the spec defines."""
    if isinstance(schema, dict):
        schema = {key: strict(value) for key, value in schema.items()}
        if schema.get("type") == "object" and "properties" in schema:
            schema["additionalProperties"] = False
        return schema
    return [strict(item) for item in schema] if isinstance(schema, list) else schema


def validate(trace: dict) -> None:
    checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
    jsonschema.Draft202012Validator(SCHEMA, format_checker=checker).validate(trace)
    jsonschema.Draft202012Validator(strict(SCHEMA), format_checker=checker).validate(trace)


def test_agent_trace_record(run_dir, ws):
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    subprocess.run(["git", "-C", str(ws), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
                    "--allow-empty", "-m", "x"], check=True)
    built = run_model.load(run_dir)
    trace = agent_trace.record(built, store_for(ws), ws)
    validate(trace)
    head = subprocess.run(["git", "-C", str(ws), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert trace["vcs"] == {"type": "git", "revision": head}
    files = {f["path"]: f["conversations"] for f in trace["files"]}
    assert sorted(files) == ["config.py", "notes.md"]
    on_disk = hashlib.sha256("\n".join((ws / "config.py").read_text().splitlines()).encode()).hexdigest()
    assert files["config.py"] == [{"contributor": {"type": "ai", "model_id": "anthropic/model-x"},
                                   "ranges": [{"start_line": 1, "end_line": 2, "content_hash": f"sha256:{on_disk}"}]}]
    assert [(r["start_line"], r["end_line"]) for r in files["notes.md"][0]["ranges"]] == [(1, 3)]
    assert trace["metadata"]["dev.vacant"]["agents"]["sub1"]["steps"] == [3]
    assert CONTENT not in json.dumps(trace)


def test_agent_trace_without_git_and_never_overwriting(run_dir, ws, tmp_path):
    trace = agent_trace.record(run_model.load(run_dir), store_for(ws), ws)
    validate(trace)
    assert "vcs" not in trace
    target = tmp_path / "trace.json"
    agent_trace.write(trace, target)
    with pytest.raises(ExportError, match="never overwrites"):
        agent_trace.write({"other": 1}, target)
    assert json.loads(target.read_text()) == trace


def test_the_command_needs_a_target(run_dir, ws):
    vacant = Path(sys.executable).parent / "vacant"
    done = subprocess.run([str(vacant), "export"], cwd=ws, capture_output=True, text=True)
    assert done.returncode == 3 and "--otlp URL" in done.stderr and "--agent-trace FILE" in done.stderr
