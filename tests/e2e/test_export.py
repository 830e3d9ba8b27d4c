"""`vacant export` on a run recorded by the real `claude` binary: the OTLP round trip through a
real Arize Phoenix server (spans read back through Phoenix's REST API), and an Agent Trace record
checked against the run's own files and the published schema.

The run: the main agent reads the spec, hands notes.md to a sub-agent, writes a wrong RATE into
config.py and cats it; the contract's check fails at Stop (report only, no rounds), graded
`provable` on the Write step."""

from __future__ import annotations

import hashlib
import json
import time

import pytest
from claude_harness import tool, turn
from harness import REPO_ROOT, text
from phoenix_harness import Phoenix
from scenarios import SCENARIOS
from vacant_run import run_scripted, vacant

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("export")]  # one recorded run

SCHEMA = REPO_ROOT / "fixtures" / "agent-trace" / "trace-record.schema.json"
TOML = ('task_family = "config"\n\n[[check]]\nname = "rate"\ncommand = "python3 check_value.py RATE config.py 0.08"\n\n'
        "[stop]\nrounds = 0\n")
NOTES = "# Notes\nThe rate comes from spec/rates.md.\nIt is a fraction.\n"
SECRET_IN_CONTENT = "CONTENT-ONLY-1b7f"  # written into a file by Write: must not leave in any export


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """One recorded run for the module's tests (each export reads it, none changes it)."""
    tmp_path = tmp_path_factory.mktemp("recorded")
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("VACANT_HOME", str(tmp_path / "vacant-data"))
        yield record(tmp_path)


def record(tmp_path):
    ws = tmp_path / "ws"
    turns = [
        turn(tool("Read", file_path=str(ws / "spec" / "rates.md"))),
        turn(tool("Agent", description="write notes", prompt="SUBTASK-NOTES: write notes.md",
                  subagent_type="general-purpose")),
        turn(tool("Write", file_path=str(ws / "notes.md"), content=NOTES), match="SUBTASK-NOTES"),
        turn(text("notes written"), match="SUBTASK-NOTES"),
        turn(tool("Write", file_path=str(ws / "config.py"), content=f"# {SECRET_IN_CONTENT}\nRATE = 0.09\n")),
        turn(tool("Bash", command="cat config.py", description="show the config")),
        turn(text("Done.")),
    ]
    files = {"vacant.toml": TOML, "spec/rates.md": "The rate is 0.08.\n",
             "check_value.py": (SCENARIOS / "check_value.py").read_text()}
    run = run_scripted(tmp_path, turns, files=files, prompt="set the rate")
    assert run.process.returncode == 0, run.process.stderr
    assert run.errors() == ""
    return run


def test_otlp_round_trip_through_phoenix(recorded, tmp_path):
    view = recorded.view()
    report = json.loads(vacant(["report", "--json"], recorded.workspace).stdout)
    [finding] = report["findings"]
    write = next(s for s in view.ordered() if s.tool == "Write" and "config.py" in s.changed_paths())
    assert (finding["level"], finding["step"]) == ("provable", write.number)

    with Phoenix(tmp_path / "phoenix") as phoenix:
        started = time.monotonic()
        sent = json.loads(vacant(["export", "--otlp", phoenix.url, "--json"], recorded.workspace).stdout)["otlp"]
        export_s = time.monotonic() - started
        spans = phoenix.spans(expect=sent["spans"])
    print(f"phoenix ready in {phoenix.started_in:.1f} s; export took {export_s:.2f} s")  # figures for the report

    assert len(spans) == sent["spans"] == len(view.steps) + 3  # run, main agent, sub-agent, one per step
    by_id = {span["context"]["span_id"]: span for span in spans}
    assert {span["context"]["trace_id"] for span in spans} == {sent["trace_id"]}
    [root] = [span for span in spans if span["parent_id"] is None]
    assert root["name"] == "vacant.run"
    main = next(span for span in spans if span["name"] == "invoke_agent main")
    assert main["parent_id"] == root["context"]["span_id"]
    assert main["attributes"]["gen_ai.provider.name"] == "anthropic"
    assert main["attributes"]["gen_ai.conversation.id"] == view.of_type("run_start")[0]["session"]

    tools = {span["attributes"]["vacant.step"]: span for span in spans if span["name"].startswith("execute_tool ")}
    assert sorted(tools) == sorted(view.steps)
    for number, step in view.steps.items():
        span = tools[number]
        assert span["name"] == f"execute_tool {step.tool}"
        assert span["attributes"]["gen_ai.tool.call.id"] == step.key.split("/", 1)[1]
        owner = "invoke_agent main" if step.agent_id is None else "invoke_agent general-purpose"
        assert by_id[span["parent_id"]]["name"] == owner, (step.tool, step.agent_id)
    agent_step = next(s for s in view.ordered() if s.tool == "Agent")
    sub = next(span for span in spans if span["name"] == "invoke_agent general-purpose")
    assert sub["parent_id"] == tools[agent_step.number]["context"]["span_id"]  # the sub-agent under its call

    read = next(s for s in view.ordered() if s.tool == "Read")
    assert any(e["name"] == "vacant.read" and e["attributes"]["vacant.read.ref"] == "spec/rates.md"
               for e in tools[read.number]["events"])
    changes = [e for e in tools[write.number]["events"] if e["name"] == "vacant.change"]
    assert changes and "config.py" in changes[0]["attributes"]["vacant.change.added"]

    evaluations = [e for e in tools[write.number]["events"] if e["name"] == "gen_ai.evaluation.result"]
    assert len(evaluations) == 1
    attributes = evaluations[0]["attributes"]
    assert attributes["vacant.finding.id"] == finding["id"]
    assert attributes["gen_ai.evaluation.score.label"] == "provable"
    assert attributes["vacant.finding.step"] == write.number
    assert attributes["vacant.finding.rerun"] == finding["evidence"]["rerun"]
    assert SECRET_IN_CONTENT not in json.dumps(spans)  # a Write's content never leaves


def test_agent_trace_record_of_a_claude_run(recorded, tmp_path):
    import jsonschema  # the test extra: missing, the test fails

    target = tmp_path / "trace.json"
    vacant(["export", "--agent-trace", str(target)], recorded.workspace)
    trace = json.loads(target.read_text())
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER).validate(trace)

    view = recorded.view()
    model = next(r["model"] for r in view.of_type("actor") if r["agent_id"] == "main")
    files = {entry["path"]: entry for entry in trace["files"]}
    assert sorted(files) == ["config.py", "notes.md"]
    [config] = files["config.py"]["conversations"]
    assert config["contributor"] == {"type": "ai", "model_id": f"anthropic/{model}"}
    assert [(r["start_line"], r["end_line"]) for r in config["ranges"]] == [(1, 2)]
    [notes] = files["notes.md"]["conversations"]
    assert [(r["start_line"], r["end_line"]) for r in notes["ranges"]] == [(1, 3)]
    sub = trace["metadata"]["dev.vacant"]["agents"]
    assert {a["agent_definition"] for a in sub.values()} == {"main", "general-purpose"}
    on_disk = (recorded.workspace / "notes.md").read_text().splitlines()
    assert notes["ranges"][0]["content_hash"] == "sha256:" + hashlib.sha256("\n".join(on_disk).encode()).hexdigest()
    assert SECRET_IN_CONTENT not in target.read_text()
    again = vacant(["export", "--agent-trace", str(target)], recorded.workspace, check=False)
    assert again.returncode == 3 and "never overwrites" in again.stderr
    assert json.loads(target.read_text()) == trace
