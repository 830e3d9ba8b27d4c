"""Texts that name vacant's own modules keep up with the tree: every `vacant/…` path and every
`vacant.x.y` module name in the package's sources (docstrings and comments included), the docs and
the README resolves to a file or module that exists, and no text puts state in `.vacant/` (the
legacy place) when it lives in `.git/vacant/`.

Not module names: the OTLP attribute keys (`vacant.finding.id`, …, their roots collected from
vacant/export/otlp.py, the attributes' single source) and file names (`vacant.toml`, `vacant.js`)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
PATH = re.compile(r"(?<![\w./-])vacant/[\w./-]*\w")
MODULE = re.compile(r"(?<![\w./-])vacant(?:\.[a-z_][a-z0-9_]*)+")
FILE_SUFFIXES = {"toml", "js", "json", "invalid"}  # vacant.toml, the OpenCode plugin file, a test host
FINDING_SOURCES = {"check", "flag"}  # gen_ai.evaluation.name is vacant.<source>.<name> (otlp.py)


def texts(repo: Path) -> list[Path]:
    return sorted([*repo.glob("vacant/**/*.py"), *repo.glob("docs/*.md"), repo / "README.md"])


def attribute_roots(repo: Path) -> set[str]:
    otlp = (repo / "vacant" / "export" / "otlp.py").read_text()
    return set(re.findall(r"[\"'](?:vacant)\.([a-z_]+)", otlp))  # "vacant.finding.id", f"vacant.check.{name}"


def _is_module(repo: Path, dotted: str) -> bool:
    parts = dotted.split(".")
    for n in range(len(parts), 1, -1):  # a module, or an attribute of one (vacant.core.events.TYPES)
        base = repo.joinpath(*parts[:n])
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            return True
    return False


def stale_names(repo: Path) -> list[tuple[str, str]]:
    roots, stale = attribute_roots(repo) | FINDING_SOURCES, []
    for path in texts(repo):
        text = path.read_text(errors="replace")
        where = str(path.relative_to(repo))
        for match in PATH.finditer(text):
            name = match.group(0)
            if not ((repo / name).exists() or (repo / f"{name}.py").exists()):
                stale.append((where, name))
        for match in MODULE.finditer(text):
            name = match.group(0)
            head = name.split(".")[1]
            if head in FILE_SUFFIXES or (head in roots and not _is_module(repo, f"vacant.{head}")):
                continue
            if not _is_module(repo, name):
                stale.append((where, name))
    return sorted(set(stale))


# vacant's state lives in git's directory (.git/vacant/); `.vacant/` is only the legacy place
LEGACY_STATE = re.compile(r"(?<![\w/])\.vacant/(?:errors\.log|runs|share|index|objects|flags|asks|ledger)\b")


def legacy_state_paths(repo: Path) -> list[tuple[str, int]]:
    """Lines that name a state file under `.vacant/` without saying it is the legacy place."""
    found = []
    for path in texts(repo):
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), start=1):
            if LEGACY_STATE.search(line) and "legacy" not in line.lower():
                found.append((str(path.relative_to(repo)), number))
    return found


def test_texts_name_where_state_really_is():
    assert legacy_state_paths(REPO) == [], "say .git/vacant/ (the state directory), not .vacant/"


def test_every_module_path_and_name_in_the_texts_resolves():
    assert stale_names(REPO) == [], "a text names a module that does not exist (moved or renamed?)"


def test_a_planted_stale_name_is_found(tmp_path):
    for rel in ("vacant/core/__init__.py", "vacant/core/events.py", "vacant/export/otlp.py", "README.md"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    (tmp_path / "vacant" / "__init__.py").write_text("")
    (tmp_path / "vacant" / "export" / "otlp.py").write_text('KEY = "vacant.finding.id"\n')
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "A.md").write_text(
        "See `vacant/core/events.py`, vacant.core.events.TYPES, vacant.toml and vacant.finding.id; "
        "but vacant/redact.py and vacant.flags moved.\n")
    assert stale_names(tmp_path) == [("docs/A.md", "vacant.flags"), ("docs/A.md", "vacant/redact.py")]
    (tmp_path / "docs" / "B.md").write_text("Errors go to .git/vacant/errors.log.\nNot .vacant/errors.log.\n"
                                            "A legacy .vacant/runs/ is read.\n")
    assert legacy_state_paths(tmp_path) == [("docs/B.md", 2)]
