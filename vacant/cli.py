"""The `vacant` command line (typer). Each command group lives in `vacant/commands/`."""

from __future__ import annotations

import sys
import warnings

import typer

from vacant import __version__
from vacant.commands import answer as answer_cmd
from vacant.commands import asks as asks_cmd
from vacant.commands import blame as blame_cmd
from vacant.commands import check as check_cmd
from vacant.commands import contract as contract_cmd
from vacant.commands import daemon as daemon_cmd
from vacant.commands import demo, doctor, init, runs, scan, uninstall
from vacant.commands import do as do_cmd
from vacant.commands import experiment as experiment_cmd
from vacant.commands import export as export_cmd
from vacant.commands import flag as flag_cmd
from vacant.commands import gate as gate_cmd
from vacant.commands import hints as hints_cmd
from vacant.commands import replay as replay_cmd
from vacant.commands import report as report_cmd
from vacant.commands import reputation as reputation_cmd
from vacant.commands import restore as restore_cmd
from vacant.commands import summary as summary_cmd
from vacant.commands import sync as sync_cmd
from vacant.commands import view as view_cmd
from vacant.core import children
from vacant.core.exitcodes import Exit
from vacant.core.keys import KeyFileError
from vacant.core.locations import WorkspaceError
from vacant.export.model import ExportError
from vacant.platforms.all_platforms import UnknownPlatform
from vacant.platforms.settings_file import InstallError
from vacant.policy.contract.contract import ContractError
from vacant.policy.contract.flags import FlagError
from vacant.share.gitstore import GitError
from vacant.store.states import ReconstructionError
from vacant.core.filelock import LockTimeout

# Help shows an argument by its name and an option by its metavar (or its name in capitals), never
# typer's type tags (`<str>`, `<list[str]>`): they say nothing a person needs there.
typer.core.TyperArgument.display_type_rich = lambda self, ctx: None
typer.core.TyperOption.display_type_rich = lambda self, ctx: None if self.is_flag else (self.metavar or self.name.upper())

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Know who did what in an agent run.",
                  rich_markup_mode=None)  # plain help: no type tags, no boxes

# Errors a user can fix: one sentence, exit 3, no traceback.
USER_ERRORS = (WorkspaceError, InstallError, UnknownPlatform, ReconstructionError, LockTimeout,
               ContractError, FlagError, KeyFileError, ExportError, GitError)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"vacant {__version__}")
        raise typer.Exit(int(Exit.OK))


@app.callback()
def root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    """vacant records agent runs through the platforms' own hooks."""


for module in (init, uninstall, doctor, runs, scan, demo, asks_cmd, answer_cmd, gate_cmd, contract_cmd, check_cmd, flag_cmd, hints_cmd, replay_cmd, report_cmd, reputation_cmd, do_cmd,
               export_cmd, blame_cmd, summary_cmd, restore_cmd, view_cmd, sync_cmd, experiment_cmd, daemon_cmd):
    module.register(app)


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
            code = app(standalone_mode=False)  # click returns a raised Exit's code here
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
    except USER_ERRORS as error:
        print(f"vacant: {error}", file=sys.stderr)
        sys.exit(int(Exit.USER_ERROR))
    except typer.BadParameter as error:
        print(f"vacant: {error}", file=sys.stderr)
        sys.exit(int(Exit.USAGE))
    except Exception as error:
        if callable(getattr(error, "show", None)) and hasattr(error, "exit_code"):  # click's usage errors
            error.show()
            sys.exit(int(Exit.USAGE))
        import traceback

        traceback.print_exc()
        print(f"vacant: internal error ({type(error).__name__}); the traceback above says where", file=sys.stderr)
        sys.exit(int(Exit.INTERNAL))
