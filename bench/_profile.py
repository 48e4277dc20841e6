"""`--profile` for the bench scripts: one cold run of a quiver command under cProfile, top functions printed."""

from __future__ import annotations

import io
import os
import pstats
import subprocess
import sys
import tempfile
from pathlib import Path


def print_profile(args: list[str], top: int = 25) -> None:
    """Run `python -m quiver ARGS` under cProfile in a fresh process; print the `top` functions by own time
    and by cumulative time."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "profile.out"
        argv = [sys.executable, "-m", "cProfile", "-o", str(out), "-m", "quiver", *args]
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # bytecode written
        subprocess.run(argv, capture_output=True, env=env)
        for order in ("tottime", "cumulative"):
            text = io.StringIO()
            pstats.Stats(str(out), stream=text).strip_dirs().sort_stats(order).print_stats(top)
            body = text.getvalue()
            print(f"--- quiver {' '.join(args[:1])}: top {top} by {order} ---")
            print(body[body.find("   ncalls") :].rstrip())
