"""blame, restore, the HTML run view and the Markdown report on a run recorded by the real
`claude` binary: a planted error (step 2 writes RATE = 0.5; the check wants 0.08) left standing
(one feedback round, which the scripted model ignores), and a file made by a shell step."""

from __future__ import annotations

import json
import os
import re

import pytest
from claude_harness import FakeUpstream, run_claude_p, tool, turn
from scenarios import SCENARIOS
from vacant_run import make_workspace, vacant

pytestmark = pytest.mark.e2e

CONTRACT = """task_family = "config"

[stop]
rounds = 1

[[check]]
name = "rate"
command = "python3 check_value.py RATE config.py 0.08"
"""
CONFIG = "# settings\nNAME = 'demo'\nRATE = 0.5\nDEBUG = False\n"
SCRIPT = "#!/bin/sh\necho built\n"


def test_blame_restore_view_and_markdown_on_a_real_claude_run(tmp_path, monkeypatch):
    monkeypatch.setenv("VACANT_HOME", str(tmp_path / "vacant-data"))
    files = {"vacant.toml": CONTRACT, "check_value.py": (SCENARIOS / "check_value.py").read_text(),
             "notes.txt": "the rate is 0.08\n"}
    workspace, home = make_workspace(tmp_path, files)
    turns = [
        turn(tool("Read", file_path=str(workspace / "notes.txt"))),
        turn(tool("Write", file_path=str(workspace / "config.py"), content=CONFIG)),
        turn(tool("Bash", command=f"printf '{SCRIPT.encode('unicode_escape').decode()}' > build.sh && chmod +x build.sh",
                  description="make the build script")),
        turn({"type": "text", "text": "Done."}),
    ]
    with FakeUpstream({"turns": turns}, tmp_path / "upstream") as upstream:
        proc = run_claude_p(workspace, home, upstream, "set the rate")
    assert proc.returncode == 0, proc.stderr
    assert not (workspace / ".vacant" / "errors.log").exists()
    log = [json.loads(line) for line in vacant(["log", "--json"], workspace).stdout.splitlines()]
    starts = {r["tool"]: r["step"] for r in log if r["type"] == "step_start"}
    run = next(r["run"] for r in log if r["type"] == "run_start")
    report = json.loads(vacant(["report", "--json"], workspace).stdout)
    [finding] = report["findings"]
    assert (finding["level"], finding["step"], finding["tool"]) == ("provable", starts["Write"], "Write")

    blame = json.loads(vacant(["blame", "config.py", "--json"], workspace).stdout)
    rows = {row["text"]: row for row in blame["lines"]}
    assert [row["text"] for row in blame["lines"]] == CONFIG.splitlines()
    rate = rows["RATE = 0.5"]
    assert (rate["origin"], rate["step"], rate["tool"], rate["run"]) == ("step", starts["Write"], "Write", run)
    assert rate["actor"]["platform"] == "claude-code" and rate["findings"] == [finding["id"]]
    assert all(row["findings"] == [] for row in blame["lines"] if row["text"] != "RATE = 0.5")
    assert "step" in vacant(["blame", "config.py", "--all-runs"], workspace).stdout

    after = tmp_path / "after-bash"
    restored = json.loads(vacant(["restore", run, "--step", str(starts["Bash"]), "--to", str(after), "--json"], workspace).stdout)
    assert restored["unrestorable"] == []
    assert (after / "build.sh").read_bytes() == SCRIPT.encode() and os.access(after / "build.sh", os.X_OK)
    assert (after / "config.py").read_text() == CONFIG
    before = tmp_path / "before-write"
    vacant(["restore", run, "--step", str(starts["Write"]), "--before", "--to", str(before)], workspace)
    assert not (before / "config.py").exists() and not (before / "build.sh").exists()
    assert (before / "notes.txt").read_text() == "the rate is 0.08\n"
    refused = vacant(["restore", run, "--step", "1", "--to", str(workspace / "restored")], workspace, check=False)
    assert refused.returncode == 3 and not (workspace / "restored").exists()

    page = tmp_path / "run.html"
    vacant(["report", "--html", str(page)], workspace)
    data_block = re.search(r'<script type="application/json" id="vacant-data">(.*?)</script>', page.read_text(), re.S)
    data = json.loads(data_block.group(1))
    [shown] = data["findings"]
    assert shown["id"] == finding["id"] and shown["hunk"]["step"] == starts["Write"]
    assert "+RATE = 0.5" in shown["hunk"]["diff"]
    assert {s["tool"] for s in data["steps"]} >= {"Read", "Write", "Bash"} and data["stops"]

    md = vacant(["report", "--format", "md"], workspace).stdout
    assert f"| {finding['id']} | **provable** | config.py:3 | {starts['Write']} (Write) |" in md
    assert len(md) <= 65_000
