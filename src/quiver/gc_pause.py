"""Cyclic garbage collection paused while a command builds a fleet's worth of long-lived objects.

`quiver lint` and `quiver compile` allocate hundreds of thousands of objects (one resolved tool and one
manifest entry per agent and tool) that all stay alive until the command ends, so every collection the
allocations trigger walks a growing heap and frees nothing: about a fifth of compile's CPU on 1,000 agents.
Reference counting still frees what is dropped. Only for bounded batch work, never for `quiver serve`.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic collection inside the block; the collector's state before it is restored after.

    What the block allocated is frozen (`gc.freeze`) before collection resumes: otherwise the first
    collection after it walks every object of the block at once (0.07 s after a fleet compile, 0.17 s per
    million containers). Frozen objects are still freed when nothing refers to them; only a reference cycle
    among them waits for the process to end, which the one-shot commands using this do soon after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
