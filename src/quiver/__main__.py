"""`python -m quiver` and the `quiver` script: the CLI, imported with the cyclic garbage collector paused.

Importing the CLI creates thousands of objects and frees almost none (classes, functions, rule tables):
the collections Python would run meanwhile find nothing to free and cost about 5 ms of every start-up.
What the import made is then frozen (`gc_paused`), so later collections never walk it again.
"""

from __future__ import annotations


def run() -> None:
    from quiver.gc_pause import gc_paused

    with gc_paused():
        from quiver.cli import main
    main()


if __name__ == "__main__":
    run()
