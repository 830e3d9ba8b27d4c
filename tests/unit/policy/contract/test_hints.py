"""Hints on a small synthetic run: unsourced numbers and unhandled failed commands; never blocking."""

from __future__ import annotations

from pathlib import Path

import pytest

from vacant.core.locations import ensure_state_dir, run_dir
from vacant.policy.contract.contract import Contract
from vacant.policy.contract.hints import (
    all_hints,
    program_key,
    unhandled_failed_command,
    unsourced_number,
)
from vacant.store.objects import ObjectStore
from vacant.store.run import RunView
from vacant.store.states import save_manifest
from vacant.store.steplog import StepLog

ACTOR = {"platform": "claude-code", "agent_definition": "main", "model": "m", "task_family": "general"}


pytestmark = pytest.mark.usefixtures("isolated_home")


class Run:
    """A run recorded the way the recorder writes it, built step by step."""

    def __init__(self, root: Path, baseline: dict | None = None) -> None:
        self.root = root
        self.store = ObjectStore(ensure_state_dir(root) / "objects")
        self.log = StepLog(run_dir(root, "run-1"))
        self.step = 0
        key = save_manifest(self.store, baseline or {})
        self.log.emit("run_start", run="run-1", platform="claude-code", workspace=str(root), source="startup", baseline=key)

    def prompt(self, text: str) -> None:
        self.log.emit("read", origin="prompt", ref="user", object=self.store.put_bytes(text.encode()), step=None)

    def tool(self, tool: str, tool_input: dict, outcome: str = "ok", exit_code: int | None = None,
             reads: list[tuple[str, str, str]] = ()) -> int:
        self.step += 1
        key = f"main/toolu_{self.step}"
        self.log.emit("step_start", step=self.step, key=key, tool=tool, input=tool_input, actor=ACTOR, open_steps=[])
        for origin, ref, content in reads:
            self.log.emit("read", origin=origin, ref=ref, object=self.store.put_bytes(content.encode()), step=self.step)
        fields = {"exit_code": exit_code} if exit_code is not None else {}
        self.log.emit("step_end", step=self.step, key=key, outcome=outcome, **fields)
        return self.step

    def bash(self, command: str, exit_code: int, output: str = "") -> int:
        outcome = "ok" if exit_code == 0 else "failed"
        return self.tool("Bash", {"command": command}, outcome, exit_code, [("command", command, output)])

    def view(self) -> RunView:
        return RunView.load(self.log.run_dir)


@pytest.fixture
def ws_files() -> dict:
    return {"data/sales.csv": "region,amount\nnorth,1250.50\nsouth,3,400\n"}


CONTRACT = Contract(pinned=["data/*.csv"], deliverables=["report.md", "out/*"])


# -- unsourced_number ---------------------------------------------------------------------------


def test_numbers_from_pinned_inputs_reads_and_prompt_are_sourced_an_invented_one_is_not(ws):
    run = Run(ws)
    run.prompt("Write the report for Q3 with a target of 5000.")
    run.tool("Read", {"file_path": str(ws / "notes.txt")}, reads=[("file", "notes.txt", "growth was 12.5% last year")])
    run.tool("Write", {"file_path": str(ws / "report.md")})
    (ws / "report.md").write_text(
        "# Q3 report\n"
        "North sold 1250.5 units; south 400.\n"  # 1250.50 and "3,400" in the CSV (two fields)
        "Target: 5,000. Growth: 12.50%.\n"
        "1. Step one, 2. step two\n"
        "Margin was 37.2% (estimated).\n"
    )
    hints = unsourced_number(ws, run.view(), CONTRACT)
    assert [(h.kind, h.path, h.line, h.value) for h in hints] == [("unsourced_number", "report.md", 5, "37.2")]
    assert hints[0].col == 12
    assert hints[0].message.startswith("hint")
    assert hints[0].to_json()["blocks"] is False


def test_without_a_run_only_pinned_inputs_count(ws):
    (ws / "report.md").write_text("North: 1250.5\nSouth: 3,400 (or 3400)\nQ3 target 5000\n")
    hints = unsourced_number(ws, None, CONTRACT)
    assert [(h.line, h.value) for h in hints] == [(3, "5000")]


def test_numbers_already_in_the_deliverable_at_baseline_are_not_the_runs(ws):
    before = b"Headcount: 42\n"
    (ws / "report.md").write_bytes(before)
    store = ObjectStore(ensure_state_dir(ws) / "objects")
    baseline = {"report.md": ["f", len(before), 1, store.put_bytes(before), 0o644]}
    run = Run(ws, baseline)
    run.tool("Edit", {"file_path": str(ws / "report.md")})
    (ws / "report.md").write_text("Headcount: 42\nOffices: 17\n")
    assert [(h.line, h.value) for h in unsourced_number(ws, run.view(), CONTRACT)] == [(2, "17")]


def test_hints_are_off_for_binary_and_non_utf8_deliverables(ws):
    (ws / "out").mkdir()
    (ws / "out" / "chart.png").write_bytes(b"\x89PNG\x00\x00 987654 ")
    (ws / "out" / "legacy.txt").write_bytes("Umsatz 987654 für Bäcker\n".encode("latin-1"))
    (ws / "out" / "plain.txt").write_text("Umsatz 987654\n")
    hints = unsourced_number(ws, None, CONTRACT)
    assert [(h.path, h.value) for h in hints] == [("out/plain.txt", "987654")]


def test_no_contract_or_no_deliverables_means_no_number_hints(ws):
    (ws / "report.md").write_text("999\n")
    assert unsourced_number(ws, None, None) == []
    assert unsourced_number(ws, None, Contract(pinned=["data/*.csv"])) == []


def test_versions_hex_and_identifiers_are_not_numbers(ws):
    (ws / "report.md").write_text("v2.3.4 and 1.2.3, 0x1F, utf8, abc123, item_77\n")
    assert unsourced_number(ws, None, CONTRACT) == []


# -- unhandled_failed_command -------------------------------------------------------------------


def test_a_failed_command_never_rerun_is_a_hint_with_its_step(ws):
    run = Run(ws)
    run.bash("ls", 0)
    failed = run.bash("python -m pytest -q", 1, "1 failed")
    run.tool("Edit", {"file_path": str(ws / "x.py")})
    hints = unhandled_failed_command(run.view())
    assert [(h.kind, h.step) for h in hints] == [("unhandled_failed_command", failed)]
    assert hints[0].message.startswith("hint") and "python -m pytest -q" in hints[0].message
    assert hints[0].path is None


def test_a_failure_rerun_successfully_is_handled(ws):
    run = Run(ws)
    run.bash("python -m pytest -q", 1)
    run.tool("Edit", {"file_path": str(ws / "x.py")})
    run.bash("python -m pytest -q tests/test_x.py", 0)  # the same program, narrowed: addressed
    run.bash("make build", 2)
    run.bash("make build", 0)
    assert unhandled_failed_command(run.view()) == []


def test_a_different_command_succeeding_does_not_handle_a_failure(ws):
    run = Run(ws)
    first = run.bash("npm test", 1)
    run.bash("npm install", 0)
    second = run.bash("npm test", 1)
    hints = unhandled_failed_command(run.view())
    assert [h.step for h in hints] == [second]
    assert "failed 2 times" in hints[0].message and first < second


def test_query_tools_exiting_1_are_answers_not_failures(ws):
    run = Run(ws)
    run.bash("grep -rn TODO src", 1)
    run.bash("diff a.txt b.txt", 1)
    run.bash("grep -rn TODO nosuchdir", 2)  # exit 2 is grep's real error
    assert [h.value for h in unhandled_failed_command(run.view())] == ["grep -rn TODO nosuchdir"]


def test_non_shell_failures_and_denied_steps(ws):
    run = Run(ws)
    run.tool("Edit", {"file_path": "x"}, outcome="failed")
    denied = run.tool("Bash", {"command": "rm -rf build"}, outcome="not-run")
    assert unhandled_failed_command(run.view()) == []
    assert denied == 2


@pytest.mark.parametrize("command, key", [
    ("pytest -q", "pytest"),
    ("cd sub && FOO=1 python3 -m pytest -x", "python3 -m pytest"),
    ("timeout 60 npm test -- --watch=false", "npm test"),
    ("/usr/bin/make -j4 all", "make -j4"),
])
def test_program_key(command, key):
    assert program_key(command) == key


def test_all_hints_combines_both_kinds(ws):
    run = Run(ws)
    run.bash("cargo build", 101)
    (ws / "report.md").write_text("Invented: 4242\n")
    kinds = [h.kind for h in all_hints(ws, run.view(), CONTRACT)]
    assert kinds == ["unsourced_number", "unhandled_failed_command"]
