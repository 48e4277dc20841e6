"""One measured child process: its CPU seconds (user + system), peak RSS and wall time, from its own rusage.

`os.wait4` reports the child alone, unlike `RUSAGE_CHILDREN`, whose peak is the largest child so far. Bytecode is
written (`PYTHONDONTWRITEBYTECODE` is removed from the child's environment), as after a wheel install.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


@dataclass(frozen=True, slots=True)
class Usage:
    cpu: float  # seconds, user + system
    peak_mib: float
    wall: float  # seconds


def run_child(argv: Sequence[str], cwd: Path | None = None) -> Usage:
    """Run `argv` to its end (stdout discarded); exits the bench with its stderr when it fails."""
    start = time.perf_counter()
    proc = subprocess.Popen(list(argv), cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}: {err.decode()[-1000:]}")
    return Usage(usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, wall)
