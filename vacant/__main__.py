"""`python -m vacant …` and the `vacant` command: the command line of `vacant.cli`.

`vacant --version` answers before anything heavy is imported (typer, pydantic, every command).
"""

import sys


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        from vacant import __version__

        print(f"vacant {__version__}")
        sys.exit(0)
    from vacant.cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
