"""Print what each install costs in a fresh venv: packages, size and time, beside peers and the empty venv.

    python bench/install.py [--rows light,serve,semantic,all,agnix,mcp-floor] [--cold]

Each row creates a venv with this interpreter (`python -m venv`), then times `pip install SPEC` into it with
a warm pip cache (the same install is made once, unmeasured, into a throwaway venv first; `--cold` skips
that). `packages` counts the distributions installed beside pip and setuptools, `MB` is the venv's size less
the empty venv's (the first row), `s` the install's wall time, and `load` the 1-minute load average when the
row finished (figures taken under load are not final). quiver's own rows install this checkout (`pip install
.`, built from source like a user's `pip install agent-quiver` from an sdist). In the light venv `quiver lint`
and `quiver compile` then run on a copy of examples/demo, and the row says whether they passed and whether
numpy or mcp can be imported there (they must not). Peers: agnix (a Rust linter of agent files, one wheel)
and `mcp click pyyaml jsonschema`, the smallest set a linter that used the MCP SDK would need.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROWS = {
    "light": [str(ROOT)],
    "serve": [f"{ROOT}[serve]"],
    "semantic": [f"{ROOT}[semantic]"],
    "all": [f"{ROOT}[all]"],
    "agnix": ["agnix"],
    "mcp-floor": ["mcp", "click", "pyyaml", "jsonschema"],
}
BASE = {"pip", "setuptools"}


def size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def venv(path: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    return path / "bin" / "python"


def install(python: Path, spec: list[str]) -> float:
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    start = time.perf_counter()
    subprocess.run([str(python), "-m", "pip", "install", "-q", *spec], check=True, env=env, capture_output=True)
    return time.perf_counter() - start


def packages(python: Path) -> int:
    out = subprocess.run(
        [str(python), "-m", "pip", "list", "--format", "json"], check=True, capture_output=True, text=True
    ).stdout
    return len([p for p in json.loads(out) if p["name"].lower() not in BASE])


def light_checks(venv_dir: Path, work: Path) -> str:
    """Run lint and compile of the demo with the light venv's `quiver`; say what happened."""
    demo = work / "demo"
    shutil.copytree(ROOT / "examples" / "demo", demo, ignore=shutil.ignore_patterns("build", ".quiver"))
    quiver = venv_dir / "bin" / "quiver"
    results = []
    for args in (["lint", "--fail-on", "never"], ["compile", "-q"], ["compile", "--check"]):
        done = subprocess.run([str(quiver), *args], cwd=demo, capture_output=True, text=True)
        results.append(
            f"{' '.join(args[:1] + args[1:2])} {'ok' if done.returncode == 0 else f'exit {done.returncode}'}"
        )
    probe = "import importlib.util as u; print(*(u.find_spec(m) is None for m in ('numpy', 'mcp', 'onnxruntime')))"
    absent = subprocess.run([str(venv_dir / "bin" / "python"), "-c", probe], capture_output=True, text=True).stdout
    results.append("numpy/mcp/onnxruntime absent" if absent.split() == ["True"] * 3 else f"extras present: {absent}")
    return ", ".join(results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default=",".join(ROWS), help="comma-separated rows (default: all)")
    parser.add_argument("--cold", action="store_true", help="do not warm pip's cache first")
    args = parser.parse_args()
    names = [n for n in args.rows.split(",") if n]
    unknown = [n for n in names if n not in ROWS]
    if unknown:
        sys.exit(f"unknown row(s): {', '.join(unknown)}; choose from {', '.join(ROWS)}")
    print(f"{'install':<40} {'packages':>8} {'MB':>7} {'s':>7}  {'load':>5}  notes", flush=True)
    with tempfile.TemporaryDirectory(prefix="quiver-install-") as tmp:
        work = Path(tmp)
        venv(work / "empty")
        empty = size(work / "empty")
        print(f"{'(empty venv)':<40} {0:>8} {empty / 1e6:>7.1f} {'':>7}  {os.getloadavg()[0]:>5.2f}", flush=True)
        for name in names:
            spec = ROWS[name]
            if not args.cold:
                warm = work / f"warm-{name}"
                install(venv(warm), spec)
                shutil.rmtree(warm)
            target = work / name
            python = venv(target)
            seconds = install(python, spec)
            notes = light_checks(target, work / f"checks-{name}") if name == "light" else ""
            shown = "pip install " + " ".join(s.replace(str(ROOT), ".") for s in spec)
            load = os.getloadavg()[0]
            megabytes = (size(target) - empty) / 1e6
            print(
                f"{shown:<40} {packages(python):>8} {megabytes:>7.1f} {seconds:>7.1f}  {load:>5.2f}  {notes}",
                flush=True,
            )
            shutil.rmtree(target)


if __name__ == "__main__":
    main()
