"""`python -m vacant …`: the same command line as `vacant …` (the experiment runs `vacant do` this way)."""

from vacant.cli import main

if __name__ == "__main__":
    main()
