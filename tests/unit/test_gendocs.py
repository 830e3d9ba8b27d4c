"""Every generated doc matches its source, and drift is caught and repaired."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vacant import gendocs
from vacant.core.docgen import DOCS_DIR, check_or_write
from vacant.gendocs import ALL_DOCS


@pytest.mark.parametrize("doc", ALL_DOCS, ids=lambda doc: doc.name)
def test_generated_doc_has_not_drifted(doc):
    current = (DOCS_DIR / doc.name).read_text()
    assert current == doc.expected(current), "run `python -m vacant.gendocs --write`"


@pytest.mark.parametrize("doc", ALL_DOCS, ids=lambda doc: doc.name)
def test_drift_is_detected_and_write_repairs_it(tmp_path, doc):
    good = (DOCS_DIR / doc.name).read_text()
    head, body = good.split(doc.begin(), 1) if doc.region else ("", good)  # a file may hold several regions
    edited = head + (doc.begin() if doc.region else "") + body.replace("|", "¦", 1)
    (tmp_path / doc.name).write_text(edited + ("" if doc.region else "edited by hand\n"))
    assert check_or_write([doc], write=False, docs_dir=tmp_path) == [doc.name]
    assert check_or_write([doc], write=True, docs_dir=tmp_path) == []
    assert (tmp_path / doc.name).read_text() == (DOCS_DIR / doc.name).read_text()


def test_every_doc_names_the_one_command_and_the_cli_checks_them_all():
    for doc in ALL_DOCS:
        assert "python -m vacant.gendocs --write" in doc.expected((DOCS_DIR / doc.name).read_text())
    proc = subprocess.run([sys.executable, "-m", "vacant.gendocs"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_every_generated_doc_in_docs_is_listed():
    generated = {path.name for path in DOCS_DIR.glob("*.md") if "vacant.gendocs --write" in path.read_text()}
    assert generated == {doc.name for doc in ALL_DOCS}


# -- a module's docstring read from its first tokens, against `ast` ------------------------------

STRINGS = st.sampled_from(['"""doc"""', "'one line'", '"""  Indented\n    second line\n  """', "r'raw \\d'",
                           "b'bytes'", "f'f {1}'", "'a' 'b'", '"""x""" \\\n  """y"""', "u'text'", "('in parens')",
                           '"doc".strip()', "'doc' + 'more'", "'doc'; x = 1"])
HEADS = st.lists(st.sampled_from(["", "# a comment", "#!/usr/bin/env python", "# -*- coding: utf-8 -*-", "   "]),
                 max_size=3)
TAILS = st.sampled_from(["", "\nimport os\n", "\nx = 1\n", "\n\ndef f():\n    'not the module docstring'\n"])


@given(HEADS, st.one_of(st.none(), STRINGS), TAILS)
@settings(max_examples=300)
def test_the_docstring_from_the_first_tokens_is_asts(heads, docstring, tail):
    source = "\n".join([*heads, docstring or "pass", tail])
    assert gendocs.module_docstring(source) == ast.get_docstring(ast.parse(source), clean=True)


def test_every_module_of_the_package_reads_as_ast_reads_it():
    for path in sorted(gendocs.PACKAGE.rglob("*.py")):
        source = path.read_text()
        assert gendocs.module_docstring(source) == ast.get_docstring(ast.parse(source), clean=True), path
