"""The argv helpers the shell reader, its forms and the record guard share (vacant/policy/gate/argv.py),
against argvs generated with their answer known: the generator places the sub-command, the
starting points and the operands, the helpers must find them again."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from vacant.policy.gate import shellwords
from vacant.policy.gate.argv import find_exec, find_starts, git_subcommand, operands, program, skip_options


def words(*texts: str) -> list:
    return [shellwords.Word(text, text, False, ()) for text in texts]


NAME = st.text("abcdefgh-_.", min_size=1, max_size=6).filter(lambda t: not t.startswith("-"))
WITH_ARG = st.sampled_from(["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env",
                            "--super-prefix"])
FLAG = st.sampled_from(["--no-pager", "-p", "--bare", "--literal-pathspecs", "--git-dir=.git", "-P"])


@given(globals_=st.lists(st.one_of(st.tuples(WITH_ARG, NAME), st.tuples(FLAG)), max_size=5), sub=NAME,
       rest=st.lists(st.one_of(NAME, FLAG), max_size=3))
def test_git_subcommand_is_found_past_every_global_option(globals_, sub, rest):
    argv = words("git", *[text for option in globals_ for text in option], sub, *rest)
    index, _inline = git_subcommand(argv)
    assert index == 1 + sum(len(option) for option in globals_)
    assert argv[index].text == sub


def test_git_inline_configuration_is_read():
    assert git_subcommand(words("git", "-c", "Alias.X=!sh", "x"))[1] == {"alias.x": "!sh"}
    assert git_subcommand(words("git", "-C"))[0] == 2  # an option missing its argument: no sub-command


@given(leading=st.lists(st.sampled_from([("-H",), ("-L",), ("-P",), ("-D", "tree"), ("-O2",)]), max_size=3),
       starts=st.lists(NAME, max_size=3), expression=st.sampled_from([[], ["-delete"], ["(", "-name", "x", ")"],
                                                                      ["!", "-name", "y"], ["-follow"]]))
def test_find_starting_points_and_following(leading, starts, expression):
    argv = words("find", *[text for option in leading for text in option], *starts, *expression)
    found, follow = find_starts(argv)
    assert [word.text for word in found] == (starts or ["."])
    assert follow == (any(option[0] in ("-H", "-L") for option in leading) or "-follow" in expression)


def test_find_exec_gives_each_command():
    argv = words("find", ".", "-exec", "rm", "-f", "{}", ";", "-execdir", "trash", "{}", "+", "-ok", "shred")
    assert [[word.text for word in nested] for nested in find_exec(argv)] == [["rm", "-f", "{}"], ["trash", "{}"],
                                                                             ["shred"]]


@given(options=st.lists(st.sampled_from(["-r", "-f", "-rf", "--force"]), max_size=3),
       targets=st.lists(NAME, max_size=3), dashed=st.lists(st.sampled_from(["-x", "--y", "-"]), max_size=2))
def test_operands_are_what_follows_the_options(options, targets, dashed):
    argv = words("/bin/rm", *options, "--", *dashed, *targets)
    assert [word.text for word in operands(argv)] == dashed + targets
    assert program(argv[0].text) == "rm"


def test_skip_options_takes_the_arguments_it_is_told_of():
    argv = words("-u", "root", "-E", "--", "-not-an-option")
    assert [word.text for word in skip_options(argv, {"-u"})] == ["-not-an-option"]
    assert [word.text for word in skip_options(words("-", "x"), set())] == ["-", "x"]
