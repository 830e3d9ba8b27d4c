"""`python -m vacant …` and the `vacant` command: the command line of `vacant.cli`.

`vacant --version` answers before anything heavy is imported (typer, pydantic, every command), and
so does `vacant reputation [--json] [--local]`: from its sealed warm text while nothing it came
from changed (vacant/share/warm.py), else computed (vacant/commands/reputation.py `answer_quickly`)
without the command line; any trouble there runs the full command line.
"""

import sys


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        from vacant import __version__

        print(f"vacant {__version__}")
        sys.exit(0)
    if sys.argv[1:2] == ["reputation"]:
        from vacant.share import warm

        variant = warm.variant_of(sys.argv[1:])
        text = warm.answer(variant, warm.time_ns()) if variant else None
        if text is not None:
            sys.stdout.write(text)
            sys.exit(0)
        from vacant.commands.reputation import answer_quickly
        from vacant.core import children

        try:
            if answer_quickly(sys.argv[1:]):
                sys.exit(0)
        except (children.Interrupted, KeyboardInterrupt) as stop:
            children.exit_interrupted(stop)
    try:
        from vacant.cli import main as cli_main  # typer and the command: a second of imports on a busy machine
    except KeyboardInterrupt as stop:  # an interrupt before the command line could catch it: the same exit
        from vacant.core import children

        children.exit_interrupted(stop)
    cli_main()


if __name__ == "__main__":
    main()
