"""`python -m vacant …` and the `vacant` command: the command line of `vacant.cli`.

`vacant --version` answers before anything heavy is imported (typer, pydantic, every command), and
so does `vacant reputation [--json] [--local]` (vacant/commands/reputation.py `answer_quickly`),
whose warm answer is otherwise mostly that import; any trouble there runs the full command line.
"""

import sys


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        from vacant import __version__

        print(f"vacant {__version__}")
        sys.exit(0)
    if sys.argv[1:2] == ["reputation"]:
        from vacant.commands.reputation import answer_quickly
        from vacant.core import children

        try:
            if answer_quickly(sys.argv[1:]):
                sys.exit(0)
        except (children.Interrupted, KeyboardInterrupt) as stop:
            children.exit_interrupted(stop)
    from vacant.cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
