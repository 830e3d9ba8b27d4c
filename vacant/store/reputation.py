"""The reputation table: reviews per agent cell, plus source and integration-coverage counts.

SQLite in WAL mode in the user's data dir ($VACANT_HOME overrides), shared by every workspace of
the user; concurrent Stops append in their own transactions, so none loses a review. People are
never rows here: a cell is (platform, agent_definition, model, task_family).
"""

from __future__ import annotations

import math
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vacant.core.cells import shown
from vacant.core.locations import user_data_dir

MIN_REVIEWS = 5
Z95 = 1.959963984540054
CELL_FIELDS = ("platform", "agent_definition", "model", "task_family")

SCHEMA = """
CREATE TABLE IF NOT EXISTS reviews (
    id INTEGER PRIMARY KEY, platform TEXT NOT NULL, agent_definition TEXT NOT NULL,
    model TEXT NOT NULL, task_family TEXT NOT NULL, score REAL NOT NULL, weight REAL NOT NULL,
    run TEXT, finding TEXT, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS source_counts (
    id INTEGER PRIMARY KEY, source TEXT NOT NULL, origin TEXT NOT NULL, run TEXT, finding TEXT, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS coverage_gaps (
    id INTEGER PRIMARY KEY, platform TEXT NOT NULL, run TEXT, finding TEXT, at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS reviews_cell ON reviews (platform, agent_definition, model, task_family);
"""


def database_path() -> Path:
    return user_data_dir() / "reputation.sqlite"


def connect(path: Path | None = None) -> sqlite3.Connection:
    path = path or database_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path, timeout=30.0, isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA busy_timeout=30000")
    connection.executescript(SCHEMA)
    return connection


def cell_key(cell: dict[str, Any]) -> tuple[str, str, str, str]:
    return tuple(shown(cell, name) for name in CELL_FIELDS)  # type: ignore[return-value]


def record_review(cell: dict[str, Any], score: float, weight: float = 1.0, run: str | None = None,
                  finding: str | None = None, path: Path | None = None) -> None:
    """Append one review of a cell: score 0 (it introduced a finding) .. 1 (a green Stop)."""
    with _transaction(path) as connection:
        connection.execute(
            "INSERT INTO reviews (platform, agent_definition, model, task_family, score, weight, run, finding, at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (*cell_key(cell), float(score), float(weight), run, finding, time.time()),
        )


def count_source(source: str, origin: str, run: str | None, finding: str | None, path: Path | None = None) -> None:
    with _transaction(path) as connection:
        connection.execute("INSERT INTO source_counts (source, origin, run, finding, at) VALUES (?, ?, ?, ?, ?)",
                           (source, origin, run, finding, time.time()))


def count_gap(platform: str, run: str | None, finding: str | None, path: Path | None = None) -> None:
    with _transaction(path) as connection:
        connection.execute("INSERT INTO coverage_gaps (platform, run, finding, at) VALUES (?, ?, ?, ?)",
                           (platform, run, finding, time.time()))


class _transaction:
    def __init__(self, path: Path | None) -> None:
        self.connection = connect(path)

    def __enter__(self) -> sqlite3.Connection:
        self.connection.execute("BEGIN IMMEDIATE")
        return self.connection

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, trace: object) -> None:
        self.connection.execute("ROLLBACK" if kind else "COMMIT")
        self.connection.close()


def wilson(successes: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion (weights act as fractional counts)."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass
class CellStats:
    cell: dict[str, str]
    n: int
    weight: float
    mean: float
    low: float
    high: float

    @property
    def enough(self) -> bool:
        return self.n >= MIN_REVIEWS

    def to_json(self) -> dict[str, Any]:
        return {**self.cell, "n": self.n, "mean": round(self.mean, 4), "wilson95": [round(self.low, 4), round(self.high, 4)],
                "enough_data": self.enough}


def cell_stats(path: Path | None = None) -> list[CellStats]:
    connection = connect(path)
    try:
        rows = connection.execute(
            "SELECT platform, agent_definition, model, task_family, COUNT(*), SUM(weight), SUM(score * weight)"
            " FROM reviews GROUP BY platform, agent_definition, model, task_family ORDER BY 1, 2, 3, 4"
        ).fetchall()
    finally:
        connection.close()
    stats = []
    for *cell, n, weight, good in rows:
        low, high = wilson(good, weight)
        stats.append(CellStats(dict(zip(CELL_FIELDS, cell)), n, weight, good / weight if weight else 0.0, low, high))
    return stats


@dataclass(frozen=True)
class ReviewRow:
    """One review as the figures count it; `vacant.share.fold` merges local and team rows."""
    cell: tuple[str, str, str, str]
    score: float
    weight: float
    run: str | None
    finding: str | None


def review_rows(path: Path | None = None) -> list[ReviewRow]:
    connection = connect(path)
    try:
        rows = connection.execute(
            "SELECT platform, agent_definition, model, task_family, score, weight, run, finding FROM reviews").fetchall()
    finally:
        connection.close()
    return [ReviewRow(tuple(row[:4]), float(row[4]), float(row[5]), row[6], row[7]) for row in rows]


def aggregate(rows: list[ReviewRow]) -> list[CellStats]:
    """`cell_stats` over any list of rows (the same sums, in Python)."""
    return stats_of(row_sums(rows))


def row_sums(rows: list[ReviewRow]) -> dict[tuple[str, str, str, str], list[float]]:
    """Per cell: [reviews, sum of weights, sum of score * weight]."""
    sums: dict[tuple[str, str, str, str], list[float]] = {}
    for row in rows:
        total = sums.setdefault(row.cell, [0, 0.0, 0.0])
        total[0] += 1
        total[1] += row.weight
        total[2] += row.score * row.weight
    return sums


def stats_of(sums: dict[tuple[str, str, str, str], list[float]]) -> list[CellStats]:
    """The figures of per-cell sums (`row_sums`)."""
    stats = []
    for cell in sorted(sums):
        n, weight, good = sums[cell]
        low, high = wilson(good, weight)
        stats.append(CellStats(dict(zip(CELL_FIELDS, cell)), int(n), weight, good / weight if weight else 0.0, low, high))
    return stats


def counts(table: str, column: str, path: Path | None = None) -> list[tuple[str, int]]:
    if (table, column) not in (("source_counts", "source"), ("coverage_gaps", "platform")):
        raise ValueError(f"no count table {table}.{column}")
    connection = connect(path)
    try:
        return connection.execute(f"SELECT {column}, COUNT(*) FROM {table} GROUP BY {column} ORDER BY 2 DESC").fetchall()
    finally:
        connection.close()


def route(task_family: str, path: Path | None = None, stats: list[CellStats] | None = None) -> list[CellStats]:
    """Cells of a task family with enough reviews, best lower bound first (of `stats` when given)."""
    stats = cell_stats(path) if stats is None else stats
    ranked = [s for s in stats if s.cell["task_family"] == task_family and s.enough]
    return sorted(ranked, key=lambda s: (-s.low, -s.mean))
