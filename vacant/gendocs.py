"""`python -m vacant.gendocs [--write]`: every generated doc under docs/, checked or rewritten.

The one list of generated docs. Without `--write` it exits 1 naming each doc that drifted from
its source; a test runs the same check for every entry.
"""

from __future__ import annotations

import ast
import inspect
import io
import sys
import tokenize
from pathlib import Path

from vacant.attribute import report_shape
from vacant.core import events, exitcodes, levels, trustenv
from vacant.core.docgen import COMMAND, GeneratedDoc, check_or_write
from vacant.platforms import all_platforms
from vacant.policy.contract import contract, probe_reasons
from vacant.policy.gate.asks import doc as asks_doc
from vacant.share import sharedoc as share_records
from vacant.show import shapes

PACKAGE = Path(__file__).resolve().parent
PYPROJECT = PACKAGE.parent / "pyproject.toml"


# -- the layer block of docs/ARCHITECTURE.md: the import-linter contract, each module's first line --


def layer_contract(pyproject: Path = PYPROJECT) -> list[str]:
    """The package's layers, top first, as `pyproject.toml`'s first import-linter contract names them."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    contracts = tomllib.loads(pyproject.read_text())["tool"]["importlinter"]["contracts"]
    return list(next(c for c in contracts if c["type"] == "layers" and not c.get("containers"))["layers"])


def module_docstring(source: str) -> str | None:
    """A module's docstring (as `ast.get_docstring(..., clean=True)` reads it) from the module's first
    tokens: about ten times cheaper than parsing the whole module. Whatever the tokens leave in doubt
    (a docstring in parentheses, an f-string, text that does not tokenize) goes to `ast`."""
    parts: list[str] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type in (tokenize.COMMENT, tokenize.NL) or (token.type == tokenize.NEWLINE and not parts):
                continue
            if token.type == tokenize.STRING:
                parts.append(token.string)
                continue
            ends_statement = token.type in (tokenize.NEWLINE, tokenize.ENDMARKER) or token.string == ";"
            if parts and ends_statement:
                value = ast.literal_eval(" ".join(parts))
                return inspect.cleandoc(value) if isinstance(value, str) else None
            if parts or token.string == "(":
                break  # an expression that starts with a string, or one in parentheses
            return None
    except (tokenize.TokenError, SyntaxError, ValueError):
        pass
    return ast.get_docstring(ast.parse(source), clean=True)


def first_sentence(path: Path) -> str:
    """The first sentence of a module's docstring (read, never imported)."""
    doc = module_docstring(path.read_text()) or ""
    paragraph = " ".join(doc.split("\n\n", 1)[0].split())
    head, dot, _ = paragraph.partition(". ")
    sentence = head + ("." if dot else "")
    return sentence.replace("|", "\\|") or "(no docstring)"


def _documented(path: Path) -> bool:
    return module_docstring(path.read_text()) is not None


def _modules(dotted: str) -> list[tuple[str, Path]]:
    """(display name, file) for one layer entry: a module, or every module of a package."""
    base = PACKAGE.parent.joinpath(*dotted.split("."))
    if base.with_suffix(".py").is_file():
        return [(dotted.removeprefix("vacant."), base.with_suffix(".py"))]
    found = []
    for path in sorted(base.rglob("*.py")):
        if "__pycache__" in path.parts or path.name == "__init__.py" and (path.parent != base or not _documented(path)):
            continue
        relative = path.relative_to(PACKAGE).with_suffix("")
        name = "/".join(relative.parts[:-1]) + "/" if relative.name == "__init__" else "/".join(relative.parts)
        found.append((name, path))
    return found


def render_layers() -> str:
    lines = ["| layer (top first) | module | what it is (its docstring's first sentence) |", "|---|---|---|"]
    for layer in layer_contract():
        names = [name.strip() for name in layer.split("|")]
        label = " · ".join(name.removeprefix("vacant.") for name in names)
        for name in names:
            for module, path in _modules(name):
                lines.append(f"| {label} | `{module}` | {first_sentence(path)} |")
                label = "″"
    return "\n".join(lines) + "\n"


LAYERS_DOC = GeneratedDoc("ARCHITECTURE.md", render_layers, ("pyproject.toml", "each module's docstring"), region=True)

# docs/TRUST.md's table of what runs where, from each platform's facts (own_sandbox, wall_refused, scopes)
WALL_DOC = GeneratedDoc("TRUST.md", all_platforms.wall_table, ("vacant/platforms/all_platforms.py",), region=True)
ALL_DOCS: list[GeneratedDoc] = [events._doc(), exitcodes.DOC, levels.DOC, asks_doc.DOC, report_shape.DOC, contract.DOC, probe_reasons.DOC,
                               shapes.DOC, share_records.DOC, trustenv._doc(), LAYERS_DOC, WALL_DOC]
# Generated code: a region of a module that may import nothing of vacant's (the lean client, the
# failure paths' deny table), between a `# BEGIN generated …` line and `# END generated`.
CODE_REGIONS = {"vacant/hook/client.py": all_platforms.client_table,
                "vacant/platforms/lean_registry.py": all_platforms.hook_table,
                "vacant/platforms/deny.py": all_platforms.deny_table}
CODE_BEGIN, CODE_END = "# BEGIN generated", "# END generated"


def code_expected(current: str, render) -> str:
    head, begin, rest = current.partition(CODE_BEGIN)
    line, _, rest = rest.partition("\n")
    _, end, tail = rest.partition(CODE_END)
    if not begin or not end:
        raise ValueError(f"no {CODE_BEGIN!r} … {CODE_END!r} region")
    return f"{head}{begin}{line}\n{render()}{end}{tail}"


def check_or_write_code(write: bool, base: Path = PACKAGE.parent) -> list[str]:
    """The code regions that drifted (rewritten with `write`)."""
    stale = []
    for name, render in CODE_REGIONS.items():
        path = base / name
        current = path.read_text()
        expected = code_expected(current, render)
        if expected != current:
            if write:
                path.write_text(expected)
            else:
                stale.append(name)
    return stale


def main(argv: list[str]) -> int:
    write = argv[:1] == ["--write"]
    stale_code = check_or_write_code(write)
    for name in stale_code:
        print(f"{name}: its generated region is out of date: run `{COMMAND}`", file=sys.stderr)
    stale = check_or_write(ALL_DOCS, write=write)
    for name in stale:
        print(f"docs/{name} is out of date: run `{COMMAND}`", file=sys.stderr)
    return 1 if stale or stale_code else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
