"""The `vacant` command line (typer). Each command group lives in `vacant/commands/`."""

from __future__ import annotations

import importlib
import sys
import warnings

import typer

from vacant import __version__
from vacant.commands.all_commands import COMMANDS, modules_for
from vacant.core import children
from vacant.core.exitcodes import Exit
from vacant.platforms import lean_registry  # noqa: F401 - registers every platform's facts (core/platform_facts), which exports and the wall read


# Help shows an argument by its name and an option by its metavar (or its name in capitals), never
# typer's type tags (`<str>`, `<list[str]>`): they say nothing a person needs there.
typer.core.TyperArgument.display_type_rich = lambda self, ctx: None
typer.core.TyperOption.display_type_rich = lambda self, ctx: None if self.is_flag else (self.metavar or self.name.upper())


USER_ERRORS = (  # (module, class): errors a user can fix
    ("vacant.core.filelock", "LockTimeout"), ("vacant.core.keys", "KeyFileError"),
    ("vacant.core.locations", "WorkspaceError"), ("vacant.export.model", "ExportError"),
    ("vacant.platforms.all_platforms", "UnknownPlatform"), ("vacant.platforms.settings_file", "InstallError"),
    ("vacant.policy.contract.contract", "ContractError"), ("vacant.policy.contract.flags", "FlagError"),
    ("vacant.share.gitstore", "GitError"), ("vacant.store.states", "ReconstructionError"),
)


def user_errors() -> tuple[type[BaseException], ...]:
    """Errors a user can fix: one sentence, exit 3, no traceback. Only the classes of modules already
    imported: an error whose module never loaded cannot have been raised, and importing them all
    (the contract's pulls in pydantic) would cost more than the command that failed."""
    loaded = (getattr(sys.modules[module], name, None) for module, name in USER_ERRORS if module in sys.modules)
    return tuple(error for error in loaded if isinstance(error, type))


def _version(value: bool) -> None:
    if value:
        typer.echo(f"vacant {__version__}")
        raise typer.Exit(int(Exit.OK))


def root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    """vacant records agent runs through the platforms' own hooks."""


def build(modules: list[str] | None = None) -> typer.Typer:
    """The command line with the commands of `modules` (vacant/commands/all_commands.py; every one
    by default). A command's help and behaviour do not depend on which others are registered."""
    built = typer.Typer(add_completion=False, no_args_is_help=True, help="Know who did what in an agent run.",
                        rich_markup_mode=None)  # plain help: no type tags, no boxes
    built.callback()(root)
    for name in modules if modules is not None else [module for module, _ in COMMANDS]:
        importlib.import_module(f"vacant.commands.{name}").register(built)
    return built


def __getattr__(name: str) -> typer.Typer:
    """`vacant.cli.app`: the whole command line, built on first use (tests and docs read it)."""
    if name != "app":
        raise AttributeError(name)
    globals()["app"] = whole = build()
    return whole





def one_line_warning(message, category, filename, lineno, line=None) -> str:  # noqa: ANN001 - the warnings API
    """A warning as one line for a person: `vacant: warning: …`, never a file name or source line."""
    text = " ".join(str(message).split())
    return f"vacant: warning: {text}\n"


def _exit_interrupted(stop: BaseException) -> None:
    children.exit_interrupted(stop)


def main() -> None:
    warnings.formatwarning = one_line_warning
    try:
        with children.interruptible():
            code = build(modules_for(sys.argv[1:]))(standalone_mode=False)  # click returns a raised Exit's code here
        sys.exit(code if isinstance(code, int) else 0)
    except (children.Interrupted, KeyboardInterrupt) as stop:
        _exit_interrupted(stop)
    except typer.Abort as error:
        if isinstance(error.__cause__, KeyboardInterrupt):  # click's rewrite of a stray Ctrl-C
            _exit_interrupted(error.__cause__)
        print(f"vacant: {error}", file=sys.stderr)
        sys.exit(int(Exit.USAGE))
    except typer.Exit as done:
        sys.exit(done.exit_code)
    except typer.BadParameter as error:
        print(f"vacant: {error}", file=sys.stderr)
        sys.exit(int(Exit.USAGE))
    except Exception as error:
        if isinstance(error, user_errors()):
            print(f"vacant: {error}", file=sys.stderr)
            sys.exit(int(Exit.USER_ERROR))
        if callable(getattr(error, "show", None)) and hasattr(error, "exit_code"):  # click's usage errors
            error.show()
            sys.exit(int(Exit.USAGE))
        import traceback

        traceback.print_exc()
        print(f"vacant: internal error ({type(error).__name__}); the traceback above says where", file=sys.stderr)
        sys.exit(int(Exit.INTERNAL))
