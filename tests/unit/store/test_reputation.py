"""Reputation: Wilson intervals, concurrent writers, enough-data rule, routing."""

from __future__ import annotations

import subprocess
import sys

import pytest

from vacant.store import reputation

CELL = {"platform": "claude-code", "agent_definition": "main", "model": "m1", "task_family": "config"}


def test_wilson_matches_known_values():
    low, high = reputation.wilson(5, 10)
    assert low == pytest.approx(0.2366, abs=1e-4) and high == pytest.approx(0.7634, abs=1e-4)
    assert reputation.wilson(0, 0) == (0.0, 1.0)
    low, high = reputation.wilson(10, 10)
    assert high == pytest.approx(1.0) and low == pytest.approx(0.7225, abs=1e-4)


def test_concurrent_writers_lose_no_review(tmp_path):
    db = tmp_path / "rep.sqlite"
    code = ("import sys; from vacant.store import reputation; from pathlib import Path\n"
            "for i in range(40): reputation.record_review({'platform': 'p', 'agent_definition': sys.argv[1],"
            " 'model': 'm', 'task_family': 't'}, i % 2, 1.0, path=Path(sys.argv[2]))")
    procs = [subprocess.Popen([sys.executable, "-c", code, f"w{n}", str(db)]) for n in range(4)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0, 0]
    stats = reputation.cell_stats(db)
    assert sorted((s.cell["agent_definition"], s.n) for s in stats) == [("w0", 40), ("w1", 40), ("w2", 40), ("w3", 40)]
    assert all(s.mean == pytest.approx(0.5) for s in stats)


def test_enough_data_and_route(tmp_path):
    db = tmp_path / "rep.sqlite"
    other = {**CELL, "model": "m2"}
    for score in (1, 1, 1, 1, 0):
        reputation.record_review(CELL, score, path=db)
    for score in (1, 1, 1):
        reputation.record_review(other, score, path=db)
    stats = {s.cell["model"]: s for s in reputation.cell_stats(db)}
    assert stats["m1"].enough and not stats["m2"].enough
    assert stats["m1"].to_json()["wilson95"][0] < 0.8 < stats["m1"].to_json()["wilson95"][1]
    assert [s.cell["model"] for s in reputation.route("config", db)] == ["m1"]
    assert reputation.route("writing", db) == []


def test_source_and_gap_counts_have_their_own_tables(tmp_path):
    db = tmp_path / "rep.sqlite"
    reputation.count_source("file:old.txt", "file", "run1", "f1", path=db)
    reputation.count_source("file:old.txt", "file", "run2", "f2", path=db)
    reputation.count_gap("codex", "run1", "f3", path=db)
    assert reputation.counts("source_counts", "source", db) == [("file:old.txt", 2)]
    assert reputation.counts("coverage_gaps", "platform", db) == [("codex", 1)]
    assert reputation.cell_stats(db) == []
