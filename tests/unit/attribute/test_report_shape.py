"""The Stop report holds exactly the documented fields: checked on reports the real pipeline wrote
(the bundled demo session played through the real hook entry), and the checker itself can fail."""

from __future__ import annotations

import json

import pytest

from vacant.attribute import report_shape
from vacant.commands.demo import SESSION, play, seed
from vacant.core.locations import list_runs


@pytest.fixture(scope="module")
def demo_reports(tmp_path_factory):
    """Played once for the module: the tests read the reports and change only copies."""
    base = tmp_path_factory.mktemp("demo")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("VACANT_HOME", str(base / "home"))
        workspace = base / "ws"
        workspace.mkdir()
        session = json.loads(SESSION.read_text())
        seed(workspace, session["files"])
        play(session, workspace)
        run = list_runs(workspace)[-1]
        return [json.loads(path.read_text()) for path in sorted((run / "reports").glob("*.json"))]


@pytest.mark.slow
def test_reports_the_pipeline_wrote_have_the_documented_shape(demo_reports):
    assert len(demo_reports) == 2 and demo_reports[0]["findings"], "the demo plants one finding"
    for report in demo_reports:
        assert report_shape.problems(report) == []


@pytest.mark.slow
def test_an_undocumented_or_missing_field_is_caught(demo_reports):
    report = dict(demo_reports[0])
    report["surprise"] = 1
    del report["vacuous"]
    finding = dict(report["findings"][0])
    finding["evidence"] = {**finding["evidence"], "new_key": True}
    report["findings"] = [finding]
    found = report_shape.problems(report)
    assert "report.surprise is not documented" in found
    assert "report.vacuous is missing" in found
    assert "findings[0].evidence.new_key is not documented" in found
