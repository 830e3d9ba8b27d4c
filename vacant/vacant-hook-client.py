"""`python -I -S …/vacant/vacant-hook-client.py PLATFORM`: the lean hook client as `vacant init` installs it (see vacant/hook/client.py).
A file, not a module (hence the hyphen: nothing can import it): the agent runs it by its path, the
way pip runs its `__pip-runner__.py`, so that it needs neither site processing nor the package's
`__init__` to start.

-I -S skips site processing (every .pth file, an editable install's import hook): about 15 ms
saved at every one of the agent's tool calls. The launcher imports vacant/hook/client.py as a
top-level module, not through the `vacant` package (whose __init__ files and `os` cost more than
the rest of a call answered by the daemon), and gives it the package's root for the slow path.
If even that fails, a pre-tool call is denied as its platform reads a deny and any other call
fails open (exit 0): the registry's deny table (vacant/platforms/deny.py, which imports nothing) is
imported the same way, from its own directory, only then. The launcher itself holds no table:
it is compiled at every call.
"""
import posix
import sys

_package = (__file__ if __file__.startswith("/") else f"{posix.getcwd()}/{__file__}").rpartition("/")[0]
sys.path.insert(0, f"{_package}/hook")
try:
    import client
except BaseException as error:  # noqa: BLE001 - a broken install must not stop the agent, nor open the gate
    sys.path[0] = f"{_package}/platforms"
    import deny

    sys.exit(deny.cannot_start(sys.argv[1:], error))
finally:
    del sys.path[0]  # nothing else is ever imported from the hook directory as a top-level module
code = client.main(package_root=_package.rpartition("/")[0] or "/")
if "vacant.attribute" in sys.modules:
    sys.exit(code)  # a Stop ran the pipeline in-process (threads, databases): the interpreter's own teardown closes them
# Otherwise every write is whole (os.write, closed files): the answer is flushed and the process
# leaves without the teardown of every module it imported (10-20 ms of an in-process answer).
try:
    sys.stdout.flush()
    sys.stderr.flush()
finally:
    posix._exit(code)
