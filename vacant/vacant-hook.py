"""`python -I -S …/vacant/vacant-hook.py PLATFORM`: the hook entry as `vacant init` installs it.
A file, not a module (hence the hyphen: nothing can import it): the agent runs it by its path, the
way pip runs its `__pip-runner__.py`, so that it needs neither site processing nor the package's
`__init__` to start.

-I -S skips site processing (every .pth file, an editable install's import hook): about 15 ms
saved at every one of the agent's tool calls. Without site, this launcher puts the package's own
root and the environment's site-packages on sys.path itself (the interpreter is called by the
absolute path of the environment's own python), then runs `vacant.hook`, which needs nothing
else (stdlib + xxhash). If even that fails, a pre-tool call is denied (the gate never fails
open) and any other call fails open: exit 0, the agent carries on.
"""
import gc
import os
import sys

gc.disable()  # a tool call's process lives milliseconds: no collector passes (a Stop turns it back on)

_lib = "lib/python%d.%d/site-packages" % sys.version_info[:2]
sys.path[:0] = [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))] + [
    path for path in (os.path.join(os.path.dirname(os.path.dirname(sys.executable)), _lib),
                      os.path.join(sys.prefix, _lib)) if os.path.isdir(path)
]
try:
    from vacant.hook.entry import main

    code = main()
except BaseException as error:  # noqa: BLE001 - a broken install must not stop the agent, nor open the gate
    sys.stderr.write(f"vacant-hook: cannot start ({type(error).__name__})\n")
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "daemon"))
    import client  # builtins only: its last resort denies a pre-tool call

    code = client.last_resort(b"" if sys.stdin.closed else sys.stdin.buffer.read(), error, (sys.argv[1:] or [""])[0])
if "vacant.attribute" in sys.modules:
    sys.exit(code)  # a Stop ran the pipeline (threads, databases): the interpreter's own teardown closes them
# A tool call's writes are whole (os.write, closed files): the answer is flushed and the process
# leaves without the teardown of every module it imported, 10-20 ms of each call.
try:
    sys.stdout.flush()
    sys.stderr.flush()
finally:
    os._exit(code)
