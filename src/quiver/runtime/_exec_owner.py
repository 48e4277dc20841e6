"""Executor owners: the `host/pid/random` an executor records on the actions it runs, and whether it is gone.

An owner is dead when its process no longer exists on this host; an owner on another host cannot be
checked and counts as alive (`recover`'s default orphan test).
"""

from __future__ import annotations

import os
import secrets
import socket


def default_owner() -> str:
    """This executor instance: `host/pid/random`."""
    return f"{socket.gethostname()}/{os.getpid()}/{secrets.token_hex(4)}"


def owner_is_gone(owner: str | None) -> bool:
    """Whether the executor that owned an action is dead: its process on this host no longer exists.
    An owner on another host cannot be checked and counts as alive."""
    if owner is None:
        return True
    host, _, rest = owner.partition("/")
    pid_text = rest.partition("/")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False
