"""Where the project sits in its git repository, so code scanning and annotations name files from the root.

quiver's locations are relative to the project root (`-C DIR`); GitHub resolves every path against the
repository root. `repository_prefix(root)` is the project's path inside the repository (`"sub/dir/"`,
`""` at the top or outside git); the reports prefix a location's file with it.
"""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path


@functools.cache
def repository_prefix(root: Path) -> str:
    """`root` relative to the top of its git work tree, with a trailing slash; "" at the top or outside git."""
    try:
        result = subprocess.run(
            ["git", "-c", "core.quotePath=false", "rev-parse", "--show-prefix"],
            cwd=root,
            capture_output=True,
            text=True,
            encoding="utf-8",
            check=False,
        )
    except (FileNotFoundError, NotADirectoryError):
        return ""
    if result.returncode != 0:
        return ""
    prefix = result.stdout.strip()
    return prefix if not prefix or prefix.endswith("/") else prefix + "/"
