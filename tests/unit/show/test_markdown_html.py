"""The Markdown findings table and the HTML page's data block: whatever text a run holds, a table
cell stays one cell and reads back as that text, the comment fits GitHub's limit, and the JSON in
the page cannot close its script element and parses back to the same value."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from recording import cli, planted_run

from vacant.core.locations import WorkspaceError
from vacant.show import html, markdown

pytestmark = pytest.mark.usefixtures("isolated_home")

UNESCAPE = {"&lt;": "<", "&gt;": ">", "&amp;": "&"}


def cells(row: str) -> list[str]:
    """Split a GFM table row on unescaped pipes, then undo the escapes (an independent reader)."""
    parts, current, i = [], "", 0
    body = row.strip()[1:-1]
    while i < len(body):
        char = body[i]
        if char == "\\" and i + 1 < len(body):
            current += body[i + 1]
            i += 2
            continue
        if char == "|":
            parts.append(current)
            current = ""
        else:
            current += char
        i += 1
    parts.append(current)
    return [re.sub("&(lt|gt|amp);", lambda m: UNESCAPE[m.group(0)], part.strip()) for part in parts]


def item(n: int, message: str, path: str = "a|b.py") -> dict:
    return {"id": f"{n:012x}", "source": "check", "name": "rate", "path": path, "line": n + 1, "message": message,
            "text": "", "level": "provable", "step": 3, "tool": "Write", "actor": {"platform": "p", "agent_definition": "main",
                                                                                 "model": "m"},
            "lineage_source": None, "evidence": {"rerun": "vacant replay r"}, "blocking": True}


def report(findings: list[dict]) -> dict:
    return {"run": "r", "findings": findings, "checks": [{"name": "rate", "passed": False}],
            "read_coverage": {"state": "partial", "why": "a shell step"}}


@settings(max_examples=150, deadline=None)
@given(message=st.text(max_size=120), path=st.text(min_size=1, max_size=20))
def test_a_cell_holds_any_text(message, path):
    text = markdown.render(report([item(1, message, path)]))
    row = next(line for line in text.splitlines() if line.startswith("| 000000000001"))
    got = cells(row)
    assert len(got) == 8
    assert got[6] == " ".join(f"check rate: {message}".split())[:300] or got[6].endswith("…")
    assert got[2] == " ".join(f"{path}:2".split())
    assert "<" not in text.replace("&lt;", "")  # no raw markup from the run


def test_the_comment_fits_and_says_what_it_left_out():
    findings = [item(n, "x" * 250) for n in range(2000)]
    text = markdown.render(report(findings))
    assert len(text) <= 65_000
    shown = sum(1 for line in text.splitlines() if line.startswith("| 0000"))
    assert 0 < shown < 2000 and f"{2000 - shown} more finding(s) not shown" in text
    assert len(markdown.render(report(findings[:3]))) < 65_000 and "not shown" not in markdown.render(report(findings[:3]))


@settings(max_examples=100, deadline=None)
@given(diff=st.text(alphabet="`+- \nab", max_size=60).filter(str.strip))
def test_a_diff_cannot_close_its_fence(diff):
    text = markdown.render(report([{**item(1, "m"), "diff": diff}]))
    body = text.split("<details>", 1)[1]
    mark = re.search(r"^(`{3,})diff$", body, re.M).group(1)
    inside = body.split(mark + "diff\n", 1)[1].split("\n" + mark + "\n", 1)[0]
    assert inside == diff.rstrip()
    assert all(len(run) < len(mark) for run in re.findall(r"`+", inside))


def test_diffs_are_left_out_before_rows():
    findings = [{**item(n, "x" * 250), "diff": "-a\n+b\n" * 40} for n in range(600)]
    text = markdown.render(report(findings))
    assert len(text) <= 65_000 and "not shown" in text and "<details>" not in text
    few = markdown.render(report(findings[:3]))
    assert few.count("```diff") == 3


def containers(inner: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4))


@settings(max_examples=200, deadline=None)
@given(value=st.recursive(st.none() | st.booleans() | st.integers() | st.text(), containers, max_leaves=12))
@pytest.mark.slow
def test_embedded_json_cannot_end_its_script_and_round_trips(value):
    embedded = html.embed_json(value)
    assert "<" not in embedded and ">" not in embedded and "\u2028" not in embedded
    assert json.loads(embedded) == value


@pytest.mark.slow
def test_report_formats_on_a_recorded_run(ws, tmp_path):
    planted_run(ws)
    md = cli(["report", "--format", "md"], ws)
    assert md.returncode == 0, md.stderr
    row = next(line for line in md.stdout.splitlines() if line.startswith("| ") and "config.py:3" in line)
    assert cells(row)[1] == "**provable**" and cells(row)[3] == "2 (Write)"
    assert "| **provable** | 1 |" in md.stdout
    assert "+RATE = 0.5" in md.stdout.split("<details>", 1)[1]  # the step's diff, collapsed
    assert cli(["report", "--format", "xml"], ws).returncode == 2


@pytest.mark.slow
def test_the_page_never_overwrites_a_file_it_did_not_write(ws, tmp_path):
    run = planted_run(ws)
    mine = tmp_path / "notes.html"
    mine.write_text("<p>the person's own page</p>")
    with pytest.raises(WorkspaceError):
        html.write_view(ws, run.run_dir, mine)
    assert mine.read_text() == "<p>the person's own page</p>"
    proc = cli(["report", "--html", str(mine)], ws)
    assert proc.returncode == 3 and mine.read_text() == "<p>the person's own page</p>"
    page = tmp_path / "view.html"
    html.write_view(ws, run.run_dir, page)
    html.write_view(ws, run.run_dir, page)  # its own page: replaced
    assert html.GENERATOR in page.read_text()[:1024]
    viewed = cli(["view", "--no-open", "--json"], ws)
    assert viewed.returncode == 0 and json.loads(viewed.stdout)["html"].endswith("/runs/s1/view.html")
