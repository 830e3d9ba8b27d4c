"""The shell reader against an independent oracle: Python's `shlex` (POSIX mode) for words, and
the generator's own list for how a line splits into simple commands."""

from __future__ import annotations

import shlex

from hypothesis import given
from hypothesis import strategies as st

from vacant.policy.gate.shellwords import LexError, normal_form, simple_commands

# words without shell-special characters survive shlex.quote/shlex.split round trips exactly; the
# reader must agree with shlex on them whatever quoting shlex.quote chose
plain = st.text(alphabet=st.characters(blacklist_characters="\x00$`\\\"'", min_codepoint=32, max_codepoint=126),
                min_size=1, max_size=8)
argv = st.lists(plain, min_size=1, max_size=5).filter(lambda words: not words[0].startswith(("#", "-")))
separators = st.sampled_from([";", "&&", "||", "|", "&"])


def _texts(command) -> list[str]:
    return [word.text for word in command.argv]


@given(words=argv)
def test_a_quoted_command_reads_back_as_the_same_words(words):
    line = shlex.join(words)
    (command,) = simple_commands(line)
    assert _texts(command) == shlex.split(line) == words


@given(commands=st.lists(argv, min_size=1, max_size=4), seps=st.lists(separators, min_size=3, max_size=3))
def test_a_list_of_commands_splits_where_the_operators_are(commands, seps):
    line = commands[0] and shlex.join(commands[0])
    for words, sep in zip(commands[1:], seps):
        line += f" {sep} {shlex.join(words)}"
    assert [_texts(command) for command in simple_commands(line)] == commands


@given(words=argv, spaces=st.lists(st.sampled_from([" ", "  ", "\t"]), min_size=5, max_size=5))
def test_the_normal_form_ignores_spacing_and_quoting(words, spaces):
    quoted = shlex.join(words)
    double = " ".join('"' + word.replace('"', '\\"') + '"' for word in words)
    spaced = "".join(space + shlex.quote(word) for space, word in zip(spaces * 2, words))
    assert normal_form(quoted) == normal_form(double) == normal_form(spaced)


@given(words=argv)
def test_a_literal_substitution_and_a_real_one_stay_different(words):
    real = shlex.join(words) + " $(id)"
    literal = shlex.join(words) + " '$(id)'"
    assert normal_form(real) != normal_form(literal)


def test_an_unclosed_quote_is_a_lex_error_not_a_guess():
    for line in ("echo 'open", 'echo "open', "echo $(open", "echo `open"):
        try:
            simple_commands(line)
        except LexError:
            continue
        raise AssertionError(f"{line!r} was read as if it were complete")
