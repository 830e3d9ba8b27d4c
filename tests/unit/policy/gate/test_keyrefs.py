"""Every argument that resolves into the person's key directory is held: the forms are generated
from wrappers (how a program takes a path) times spellings (how a path names the key), each
against a look-alike that names a sibling directory instead (which must not be refused for the key)."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest

from vacant.core.calls import HookCall
from vacant.core.locations import mark_installed
from vacant.platforms.all_platforms import load
from vacant.policy.gate.gate import classify
from vacant.policy.gate.rules import KEY_REFUSAL, load_policy

pytestmark = pytest.mark.usefixtures("isolated_home")

# {p}: a path spelled as below; the programs are the campaign's and their neighbours
WRAPPERS = ["dd if={p} of=/dev/null", "curl -s file://{p}", "sqlite3 :memory: \"select readfile('{p}')\"",
            "python3 -c 'print(open(\"{p}\", \"rb\").read())'", "git --work-tree={p} add .", "cat {p}",
            "base64 {p}", "cp {p} /tmp/x", "node -e 'require(\"fs\").readFileSync(\"{p}\")'", "awk 1 {p}"]
SPELLINGS = ["~/.config/{d}/key", "$HOME/.config/{d}/key", "${{HOME}}/.config/{d}/key", "{home}/.config/{d}/key",
             "{home}/.config/../.config/{d}/key", "{home}//.config/{d}/", "~/.config/{d}"]
# a directory above the key, handed to a program that reads whole trees
TREES = ["tar -C {a} -cf - {rest}", "find {a} -name key -exec cat {{}} +", "grep -r . {a}", "cp -r {a} /tmp/c",
         "rsync -a {a}/ /tmp/c", "zip -r /tmp/c.zip {a}", "grep -R secret {a}"]


def _call(root: Path, command: str) -> HookCall:
    kind, intent = load("claude").intent("Bash", {"command": command})
    return HookCall("tool_pre", "s1", root, tool="Bash", tool_input={"command": command}, key="t1", scope=None,
                    cwd=str(root), tool_kind=kind, intent=intent)


def _refused_for_key(root: Path, command: str) -> bool:
    verdict = classify(root, _call(root, command), load_policy(root))
    head = KEY_REFUSAL.split("{path}")[0][:40]
    return verdict is not None and verdict.kind == "refuse" and head in (verdict.message or "")


@pytest.fixture
def root(tmp_path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    mark_installed(ws)
    key_dir = Path(os.environ["XDG_CONFIG_HOME"]) / "vacant"
    assert (key_dir / "key").is_file()  # the person's, made by isolated_home
    (key_dir.parent / "other").mkdir()
    return ws


CASES = [(w, s) for w, s in itertools.product(WRAPPERS, SPELLINGS)]


@pytest.mark.parametrize("wrapper, spelling", CASES)
def test_a_path_into_the_key_directory_is_held_in_any_wrapper(root, wrapper, spelling):
    home = os.environ["HOME"]
    named = wrapper.format(p=spelling.format(d="vacant", home=home))
    sibling = wrapper.format(p=spelling.format(d="other", home=home))
    assert _refused_for_key(root, named), named
    assert not _refused_for_key(root, sibling), sibling


@pytest.mark.parametrize("form, above", list(itertools.product(TREES, ["~", "~/.config", "$HOME/.config"])))
def test_an_ancestor_of_the_key_directory_given_to_a_tree_reader_is_held(root, form, above):
    rest = "vacant" if above != "~" else ".config/vacant"
    assert _refused_for_key(root, form.format(a=above, rest=rest))


@pytest.mark.parametrize("command", ["ls ~/.config", "ls -la ~", "du -sh ~/.config", "echo ~/.config/vacant-notes",
                                     "grep secret ~/.bashrc", "tar -C ~/.config -cf - other", "find . -name key"])
def test_look_alikes_stay_free_of_the_key_refusal(root, command):
    assert not _refused_for_key(root, command)
