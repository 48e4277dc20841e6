"""`python -m quiver` and the `quiver` script: the CLI, imported with the cyclic garbage collector paused.

Importing the CLI creates thousands of objects and frees almost none (classes, functions, rule tables):
the collections Python would run meanwhile find nothing to free and cost about 5 ms of every start-up.
"""

from __future__ import annotations

import gc


def run() -> None:
    gc.disable()
    try:
        from quiver.cli import main
    finally:
        gc.enable()
    main()


if __name__ == "__main__":
    run()
