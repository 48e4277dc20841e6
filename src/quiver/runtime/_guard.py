"""No upstream outlives its gateway, not even a gateway killed with SIGKILL (Linux).

The SDK's `stdio_client` starts each server in a new session (its own process group) and, when the
connection ends, closes its stdin, then SIGTERMs and SIGKILLs the group, each step bounded. That
covers every exit the gateway lives through; a SIGKILL (or an OOM kill) of the gateway runs none of
it, and a server blocked in a call never reads the EOF on its stdin.

So on Linux the server runs under a small guard: `python -I -S -c GUARD PARENT_PID COMMAND ARGS...`
(the SDK's spawn has no `preexec_fn`, so the guard is the process it starts). The guard asks the
kernel for a parent-death signal (`prctl(PR_SET_PDEATHSIG, SIGUSR1)` through ctypes), checks that its
parent is still the gateway (else it was already orphaned and exits), forks and execs the server
(in the guard's process group, the one the SDK created), and waits. When the gateway dies the kernel
signals the guard, which SIGKILLs the whole group (the server and anything it started) and itself.
The guard ignores SIGTERM/SIGINT: the SDK's shutdown signals the group, the server exits, and the
guard exits with the server's status.
Its copy of the server's stdout is closed, so EOF there still means the server is gone. It keeps its
copy of the server's stdin only to watch it (never reading): when the gateway's end closes (the
gateway stopping the connection, or dying), the server gets EXIT_GRACE_S (1 s) to exit on its own,
then the group gets SIGTERM and, KILL_GRACE_S (0.5 s) later, SIGKILL. This is MCP's shutdown sequence
with shorter waits than the SDK's own (2 s, then 2 s), which still runs and finds the group gone: a
server that finishes its work before it exits never holds a stopped gateway for long.
The server itself gets SIGKILL as its parent-death signal, so killing the guard kills the server too
(as the SDK and the tests expect of "the process it started").

The command is resolved on the gateway's side first: a command that does not exist is started
unguarded, so the SDK reports the missing file as before.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping

__all__ = ["GUARD", "guarded"]

GUARD = r"""
import ctypes, os, select, signal, sys, threading, time
EXIT_GRACE_S, KILL_GRACE_S = 1.0, 0.5
parent, command, args = int(sys.argv[1]), sys.argv[2], sys.argv[2:]
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(1, int(signal.SIGUSR1), 0, 0, 0) != 0:  # PR_SET_PDEATHSIG
    sys.exit("quiver guard: prctl(PR_SET_PDEATHSIG) failed")
def kill_group(signum, frame):
    os.killpg(0, signal.SIGKILL)
signal.signal(signal.SIGUSR1, kill_group)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
signal.signal(signal.SIGINT, signal.SIG_IGN)
if os.getppid() != parent:  # the gateway died before the signal was armed
    os._exit(1)
guard = os.getpid()
pid = os.fork()
if pid == 0:
    libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # the guard killed: the server goes too
    if os.getppid() != guard:
        os._exit(1)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGUSR1, signal.SIG_DFL)
    try:
        os.execvp(command, args)
    except OSError as exc:
        sys.stderr.write(f"quiver guard: cannot run {command}: {exc}\n")
        os._exit(127)
null = os.open(os.devnull, os.O_RDWR)
os.dup2(null, 1)
def on_stdin_closed():
    poll = select.poll()
    poll.register(0, 0)  # no events asked: only POLLHUP, when the gateway's end of stdin is gone
    while not any(event & (select.POLLHUP | select.POLLERR) for _, event in poll.poll()):
        pass
    time.sleep(EXIT_GRACE_S)  # the server's time to exit on its own, as MCP's shutdown asks
    os.killpg(0, signal.SIGTERM)
    time.sleep(KILL_GRACE_S)
    os.killpg(0, signal.SIGKILL)
threading.Thread(target=on_stdin_closed, daemon=True).start()
while True:
    try:
        _, status = os.waitpid(pid, 0)
        break
    except ChildProcessError:
        os._exit(0)
code = os.waitstatus_to_exitcode(status)
os._exit(code if code >= 0 else 128 - code)
"""


def guarded(command: str, args: list[str], env: Mapping[str, str], cwd: str | None) -> tuple[str, list[str]]:
    """The command line that runs `command args` under the guard (Linux), else `command args` unchanged."""
    where = os.path.join(cwd, command) if cwd and os.sep in command else command
    if not sys.platform.startswith("linux") or shutil.which(where, path=env.get("PATH")) is None:
        return command, args
    return sys.executable, ["-I", "-S", "-c", GUARD, str(os.getpid()), command, *args]
