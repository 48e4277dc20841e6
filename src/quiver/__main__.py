from __future__ import annotations

from quiver.cli import main

main()
