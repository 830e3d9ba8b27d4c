"""No platform is named outside vacant/platforms/: what differs between platforms is a fact of the
platform's module (its project-directory variables, whether `vacant do` can wall it, ...), read
through the registry, never a branch on a name elsewhere. A generated table (between the
`BEGIN generated` / `END generated` markers, written from the registry by vacant.gendocs) may
hold names: it is the registry's, copied where the registry cannot be imported."""

from __future__ import annotations

import ast
from pathlib import Path

from vacant.platforms.all_platforms import REGISTERED

PACKAGE = Path(__file__).resolve().parents[3] / "vacant"
# `command` is the plain-command platform's name and also every shell tool's input key and a
# dozen other words: a literal "command" names no platform by itself
GENERIC = {"command"}
# files still naming a platform, each with why (empty is the aim)
ALLOWED = {
    # the walls record is keyed by the registry name, the run by its cell: a mapping owned by the
    # attribute layer, being edited on another branch (issue 44: to become a platform fact)
    "attribute/recordaudit.py": {"claude-code", "claude"},
}


def platform_names() -> set[str]:
    names = {n for p in REGISTERED for n in (p.name, p.cell_platform, *p.aliases) if n}
    return names - GENERIC


def _generated_lines(text: str) -> set[int]:
    lines, inside = set(), False
    for number, line in enumerate(text.splitlines(), 1):
        if "BEGIN generated" in line:
            inside = True
        elif "END generated" in line:
            inside = False
        elif inside:
            lines.add(number)
    return lines


def named_platforms(path: Path, names: set[str]) -> list[tuple[int, str]]:
    """(line, name) of every string literal that is exactly a platform's name, outside a generated table."""
    text = path.read_text()
    generated = _generated_lines(text)
    return [(node.lineno, node.value) for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names
            and node.lineno not in generated]


def test_no_platform_is_named_outside_the_platforms_package():
    names = platform_names()
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith("platforms/"):
            continue
        hits = [(line, name) for line, name in named_platforms(path, names)
                if name not in ALLOWED.get(relative, set())]
        if hits:
            found[relative] = hits
    assert found == {}, f"make these platform facts (vacant/platforms/base.py PlatformBase): {found}"


def test_no_project_directory_variable_is_read_outside_the_platforms_package():
    """CLAUDE_PROJECT_DIR and its kind are facts of their platforms (`project_dir_env`)."""
    variables = {var for p in REGISTERED for var in p.project_dir_env}
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if not relative.startswith("platforms/"):
            hits = named_platforms(path, variables)
            if hits:
                found[relative] = hits
    assert variables and found == {}, found


def test_the_search_finds_a_name_where_one_is(tmp_path):
    """The oracle for the search itself: a branch on a name is found, a generated table is not."""
    sample = tmp_path / "sample.py"
    sample.write_text('# BEGIN generated\nTABLE = ("gemini",)\n# END generated\nif platform == "opencode":\n    pass\n')
    assert named_platforms(sample, platform_names()) == [(4, "opencode")]
