"""Started by tests/test_light_install.py through PYTHONPATH: this interpreter behaves as if the packages
named in QUIVER_TEST_ABSENT (comma-separated top-level modules) were not installed. `importlib.util.find_spec`
returns None for them and importing one raises ModuleNotFoundError, as in a venv without them."""

import importlib.machinery
import os
import sys

ABSENT = frozenset(filter(None, os.environ.get("QUIVER_TEST_ABSENT", "").split(",")))


class _Absent:
    @staticmethod
    def find_spec(name, path=None, target=None):  # type: ignore[no-untyped-def]
        if name.partition(".")[0] in ABSENT:
            return None
        return importlib.machinery.PathFinder.find_spec(name, path, target)

    @staticmethod
    def invalidate_caches():  # type: ignore[no-untyped-def]
        importlib.machinery.PathFinder.invalidate_caches()


sys.meta_path[:] = [_Absent if f is importlib.machinery.PathFinder else f for f in sys.meta_path]
