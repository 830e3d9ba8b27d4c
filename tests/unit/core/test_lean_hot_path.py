"""What the hook's lean path swaps in must answer exactly what it replaces: the builtin SHA-256
against hashlib's, a lazily compiled pattern against `re.compile`, and the redactor's cheap
prefilters against the full patterns they guard (a prefilter that says no where the pattern
says yes would let a secret through)."""

from __future__ import annotations

import hashlib
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vacant.core import redact
from vacant.core.lazyre import Lazy
from vacant.core.sha import sha256
from vacant.policy.shipped import DEFAULT_RULES

TOKEN_CHARS = "AaBbZz09+/=_-.:'\"` \nſKı"
KEYWORDS = list(redact.KEYWORDS + redact.MORE_KEYWORDS)


@given(st.binary(max_size=4096))
def test_the_builtin_sha256_is_hashlibs(data):
    assert sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
    parts = sha256()
    parts.update(data[:7])
    parts.update(data[7:])
    assert parts.digest() == hashlib.sha256(data).digest()


@given(st.text(alphabet=TOKEN_CHARS + "gitpushnpmcurlX", max_size=200))
@settings(max_examples=200)
def test_the_shipped_rules_lazy_patterns_match_what_re_compile_matches(text):
    for rule in DEFAULT_RULES:
        oracle = re.compile(rule.command.pattern)
        assert bool(rule.command.search(text)) == bool(oracle.search(text)), rule.name
        assert bool(rule.command.search("git push " + text)) == bool(oracle.search("git push " + text))


def test_a_lazy_pattern_compiles_on_first_use_only():
    lazy = Lazy(r"a+b", re.IGNORECASE)
    assert lazy._compiled is None
    assert lazy.search("xAAb").group(0) == "AAb"
    assert lazy.fullmatch("ab") and not lazy.match("b") and lazy.sub("-", "aab ab") == "- -"
    assert [m.group(0) for m in lazy.finditer("ab aab")] == ["ab", "aab"]
    assert lazy == Lazy(r"a+b", re.IGNORECASE) and lazy != Lazy(r"a+b")


# keys: affixes around a keyword (its own casing mangled) or random text, Unicode case folds included
def _mangle(keyword: str, flips: list[bool]) -> str:
    word = re.sub(r"_\?|s\?|\(\?:[^)]*\)\?", "", keyword)
    return "".join(c.upper() if flip else c for c, flip in zip(word, flips + [False] * len(word)))


keys = st.one_of(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz_-0ſKıİ", max_size=30),
    st.builds(lambda pre, kw, flips, post: pre + _mangle(kw, flips) + post,
              st.text(alphabet="ab_-9", max_size=6), st.sampled_from(KEYWORDS), st.lists(st.booleans(), max_size=20),
              st.text(alphabet="ab_-9", max_size=6)),
    st.builds(lambda kw, i: kw.replace("s", "ſ", 1) if i else kw.replace("k", "\u212a", 1),
              st.sampled_from(["password", "secret", "api_key", "token", "passwd"]), st.booleans()),
)


@given(keys)
@settings(max_examples=150)
def test_the_secret_name_prefilter_never_says_no_where_the_pattern_says_yes(key):
    oracle = re.compile(redact._KEY_NAME.pattern, redact._KEY_NAME.flags)
    assert redact._secret_name(key) == bool(oracle.match(key)), key


@pytest.mark.slow
@given(st.text(alphabet=TOKEN_CHARS + "cdefghXYZ1234", min_size=30, max_size=120))
@settings(max_examples=400)
def test_the_bare_token_prefilter_holds_for_every_text_the_pattern_matches(text):
    if redact._BARE.search(text):
        assert redact._BARE_RUN.search(text), text
        assert redact._mixed_case_and_digit(text), text


KEYWORD_LINE = st.lists(st.one_of(st.sampled_from(KEYWORDS + ["[REDACTED:x]", "=", ":", "=>", ":=", " ", '"', "'",
                                                                "Password", "DB_PASS", "2528250d92619b8e"]),
                                   st.text(alphabet="abdkey_-9=: \t'\"", max_size=5)), max_size=12).map("".join)


@given(KEYWORD_LINE)
@settings(max_examples=400)
def test_the_keyword_prefilter_never_says_no_where_the_keyword_pattern_matches(line):
    oracle = re.compile(redact._KEYWORD.pattern, redact._KEYWORD.flags)
    if oracle.search(line):
        assert redact._may_name_a_secret(line.lower()), line


def test_no_memoised_plain_name_is_a_secret_name():
    oracle = re.compile(redact._KEY_NAME.pattern, redact._KEY_NAME.flags)
    assert [name for name in sorted(redact.PLAIN_NAMES) if oracle.match(name)] == []


NEEDS_TEXT = st.text(alphabet="0123456789abcdefABCDEFxyzXYZ_-.:/ \u0663\u0b6au", max_size=120)


@pytest.mark.slow
@given(st.one_of(NEEDS_TEXT, st.builds(lambda a, b, c: a + b + c, NEEDS_TEXT, st.sampled_from(
    ["a" * 44, "f" * 48, "0" * 64, "Q" * 24, "x" * 64, "b" * 23 + ".", "\u0663" * 8 + ":", "AB" + "c" * 32,
     "1" * 32 + "-us", "_" * 23 + "."]), NEEDS_TEXT)))
@settings(max_examples=400)
def test_each_needs_run_holds_wherever_its_pattern_matches(text):
    for plugin, source in redact._NEEDS.items():
        runs = redact._NEED_RUNS[plugin]
        found = re.search(source, text) is not None
        assert not found or any(redact.has_run(text, run) for run in runs), (plugin, text)


def test_a_needs_run_is_found_where_one_stands_and_only_there():
    discord = redact._NEED_RUNS["DiscordBotTokenDetector"][0]
    assert redact.has_run("x" * 23 + ".", discord) and not redact.has_run("x" * 22 + ".", discord)
    assert not redact.has_run("x" * 23 + ",", discord) and redact.has_run("/a/" + "\u0663" * 23 + ".b", discord)


@given(st.text(alphabet="AbCDEFGHxyz09_", max_size=14))
def test_kebab_names_a_detector_as_the_pattern_does(word):
    oracle = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "-", word).lower()
    assert redact.kebab(word) == oracle


def test_an_entropy_token_is_still_redacted_bare():
    token = "Zq8xK2mP9vR4tY7wB3nL6cF1hJ5dG0sAeU"  # 34 characters, mixed case and digits
    assert token not in redact.redact_text(f"value {token} end")
    assert redact.redact({"paſsword": "hunter2-long-enough"}) != {"paſsword": "hunter2-long-enough"}


# -- `re` left out of a file tool's call: what stands in for it answers as `re` does ---------------

def test_the_flags_a_hot_module_names_are_res_own():
    from vacant.core import lazyre

    assert (lazyre.IGNORECASE, lazyre.MULTILINE, lazyre.DOTALL) == (re.IGNORECASE, re.MULTILINE, re.DOTALL)


ODD_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)
PUNCTUATED = st.text(alphabet="xX_0 .*+?^$|()[]{}\\-\n\t#&~'\"é·", max_size=12)


@given(st.one_of(ODD_TEXT, PUNCTUATED), st.data())
@settings(max_examples=300)
def test_escape_matches_exactly_its_text_as_re_escape_does(text, data):
    from vacant.core.lazyre import escape

    others = [data.draw(st.one_of(ODD_TEXT, PUNCTUATED))]
    if text:  # the same text with one character changed: a wildcard left unescaped would match it
        at = data.draw(st.integers(0, len(text) - 1))
        others.append(text[:at] + data.draw(st.sampled_from("xX_0.\n")) + text[at + 1:])
    pattern = escape(text)
    assert re.fullmatch(pattern, text) and re.fullmatch(pattern.encode(), text.encode())  # hookcall: bytes
    for other in others:
        assert bool(re.fullmatch(pattern, other)) == bool(re.fullmatch(re.escape(text), other)) == (other == text)


FAMILY_PIECES = ["task_family", "task_famil", "=", " ", "\t", "\n", "\r", "\x0b", "\x1c", "\xa0", "\u2028", '"', "'",
                 "x", "web", "#", "[", "]", "\n\n", "task_family = 'web'", 'task_family="x"', "task_family =\n'a\"",
                 "\ttask_family\u2028=\xa0'", "task_family = ''", "  task_family = \""]


@given(st.lists(st.sampled_from(FAMILY_PIECES), max_size=30).map("".join))
@settings(max_examples=500)
def test_the_task_family_reader_finds_what_its_regex_finds(text):
    from vacant.record.recorder import TASK_FAMILY_PATTERN, family_in

    match = re.search(TASK_FAMILY_PATTERN, text, re.MULTILINE)
    assert family_in(text) == (match.group(1) if match else None)


@given(st.lists(st.sampled_from(["claude", "-opus", "[", "]", "1m", "\n", "x", "[1m]"]), max_size=12).map("".join))
@settings(max_examples=500)
def test_the_model_id_drops_the_tag_its_regex_drops(name):
    from vacant.platforms.claude import MODEL_TAG_PATTERN, model_id

    assert model_id(name) == re.sub(MODEL_TAG_PATTERN, "", name)


@given(st.lists(st.sampled_from(["gate", "store", "MODE", ":", "[", "]", ".", "=", " ", "\n", "#", "x", "READ"]),
                max_size=20).map("".join))
def test_a_literal_prefilter_says_no_only_where_its_pattern_cannot_match(text):
    """The contract's `[gate]` and `[store]` sniffers and an arm's MODE line are tried by a
    substring test first; when it says no, the pattern must say no too."""
    from vacant.policy.gate.modes import mode_of

    data = text.encode()
    if b"gate" not in data:
        assert not re.search(rb"^\s*\[\s*\[?\s*gate\b|^\s*gate\s*[.=]", data, re.MULTILINE)
    if b"store" not in data:
        from vacant.store.exclude import _HAS_STORE

        assert not re.search(_HAS_STORE, data, re.MULTILINE)
    if "MODE" not in text:
        assert mode_of(text) is None and mode_of("# MODE: READ\n") == "READ"
