"""Mutated project inputs for the fuzz suite (tests/test_fuzz_readers.py) and its long run (bench/fuzz.py).

A case is a seed: `mutate(data, random.Random(seed))` applies one to three mutations to a file's bytes:
byte flips, insertions, deletions, truncation, a slice repeated, the file re-encoded as UTF-16 or Latin-1,
or a hostile token inserted (a 5,000-digit number, 3,000 nested brackets, NUL, a BOM, a lone surrogate
escape, `1e99999`, an alias bomb, TOML tables that capture keys, a wrong-typed value...). `READERS` maps
each input kind to the reader quiver uses for it; `read_case` runs one and returns None when it answered
or raised a `QuiverError` (exit 2), else the unexpected exception (what the CLI reports as exit 3).
"""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable
from pathlib import Path

from quiver.errors import QuiverError

DEMO = Path(__file__).resolve().parents[1] / "examples" / "demo"
TOKENS = [
    b"9" * 5000, b"-" + b"9" * 4400, b"[" * 3000, b"{" * 3000, b'{"a":' * 1200, b"\x00", b"\xef\xbb\xbf", b"\r",
    b"\xff\xfe", b"\xc3", b"\xed\xa0\x80", b'"\\ud800"', b"1e99999", b"-0", b"NaN", b"Infinity", b"\xf0\x9f\x92\xa5",
    b"\xe2\x80\xae", b"${input:x}", b", ", b": ", b"---\n", b"\n---\n", b"*a", b"&a [*a, *a, *a]", b"!!python/x",
    b"\n[[mcp_servers]]\nname = 1\n", b"\n[servers.x]\nretry = {initial_interval = -1.0}\n", b"\ntools = 5\n",
    b'"args": "--x"', b'"tools": {}', b"\nmodel: [1, 2]\n", b"\ntools: 7\n", b"description: [a]\n", b"\t", b"\\",
    b'"', b"'", b"#", b"//", b"/*", b"]", b"}", b"=", b"\n[tool.quiver]\n", b"inf", b"2024-13-45", b"0x", b"~",
    b"\n" * 50, b" " * 3000, b"a" * 70000, b"\\x41", b"<!-- quiver: ignore[ALL] -->", b"mcp__", b"/" * 300,
]  # fmt: skip


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One to three mutations of `data` (see the module docstring), chosen by `rng`."""
    for _ in range(rng.randint(1, 3)):
        kind = rng.randrange(9)
        at = rng.randint(0, len(data))
        if kind == 0 and data:
            index = rng.randrange(len(data))
            data = data[:index] + bytes([data[index] ^ (1 << rng.randrange(8))]) + data[index + 1 :]
        elif kind == 1:
            data = data[:at] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 8))) + data[at:]
        elif kind == 2:
            data = data[:at] + data[at + rng.randint(1, 64) :]
        elif kind == 3:
            data = data[:at]
        elif kind == 4:
            end = min(len(data), at + rng.randint(1, 400))
            data = data[:end] + data[at:end] * rng.randint(1, 30) + data[end:]
        elif kind == 5:
            encoding = rng.choice(["utf-16", "utf-16-be", "latin-1", "utf-32"])
            data = data.decode("utf-8", "replace").encode(encoding, "replace")
        else:
            data = data[:at] + rng.choice(TOKENS) + data[at:]
    return data


def _agent(root: Path, rel: str) -> object:
    from quiver.sources.agents import read_agent

    return read_agent(root, rel)


def _mcp(root: Path, rel: str) -> object:
    from quiver.sources.mcp_config import read_mcp_config

    return read_mcp_config(root, rel)


def _config(root: Path, rel: str) -> object:
    from quiver.config import load_config
    from quiver.policy import policy_errors

    return policy_errors(load_config(root))


def _lock(root: Path, rel: str) -> object:
    from quiver.sources.lock import read_lock

    return read_lock(root, rel)


def _routes(root: Path, rel: str) -> object:
    from quiver.sources.files import read_text
    from quiver.sources.route_cases import parse_cases

    return parse_cases(read_text(root / rel, rel), rel)


def _import(root: Path, rel: str) -> object:
    from quiver.sources.imports import import_catalog

    return import_catalog(root / rel, "s", rel)


def _manifest(root: Path, rel: str) -> object:
    from quiver.runtime._manifest import load_manifest

    return load_manifest(root / rel)


def _shadow(root: Path, rel: str) -> object:
    from quiver.sources.shadow_log import read_shadow_log

    return read_shadow_log(root / rel)


def _ignores(root: Path, rel: str) -> object:
    from quiver.sources.contract_ignore import read_ignores

    return read_ignores(root)


def _baseline(root: Path, rel: str) -> object:
    from quiver.sources.baseline import read_baseline

    return read_baseline(root / rel)


# input kind -> (project-relative file, reader)
READERS: dict[str, tuple[str, Callable[[Path, str], object]]] = {
    "agent": (".claude/agents/ops.md", _agent),
    "copilot-agent": (".github/agents/researcher.agent.md", _agent),
    "chatmode-like": (".github/agents/browser-tester.agent.md", _agent),
    "mcp.json": (".mcp.json", _mcp),
    "vscode-mcp.json": (".vscode/mcp.json", _mcp),
    "quiver.toml": ("quiver.toml", _config),
    "lock": ("quiver.lock.json", _lock),
    "routes": (".quiver/routes.yaml", _routes),
    "tools-list": ("tools.json", _import),
    "manifest": ("build/quiver/ops.json", _manifest),
    "shadow-log": ("shadow.jsonl", _shadow),
    "contract-ignore": (".quiver/contract-ignore.yaml", _ignores),
    "baseline": (".quiver/baseline.json", _baseline),
}


def seed_project(target: Path) -> Path:
    """A copy of the demo with one file of every kind a reader takes (tools list, shadow log, ignores, ...)."""
    shutil.copytree(DEMO, target, ignore=shutil.ignore_patterns(".quiver"))
    (target / ".quiver").mkdir()
    shutil.copy(DEMO / ".quiver" / "routes.yaml", target / ".quiver" / "routes.yaml")
    lock = json.loads((DEMO / "quiver.lock.json").read_text())
    tools = [t["tool"] for t in lock["servers"]["github"]["tools"][:5]]
    (target / "tools.json").write_text(json.dumps({"tools": tools}, indent=2))
    (target / "shadow.jsonl").write_text(
        "".join(json.dumps({"session": f"s{i}", "agent": "ops", "tool": "github/issue_read"}) + "\n" for i in range(3))
    )
    (target / ".quiver" / "contract-ignore.yaml").write_text("CTR001:github/issue_write: renamed on purpose\n")
    (target / ".quiver" / "baseline.json").write_text(json.dumps({"version": 1, "fingerprints": ["abc"]}))
    return target


def read_case(root: Path, kind: str, seed: int, originals: dict[str, bytes]) -> BaseException | None:
    """Mutate `kind`'s file of the project at `root` by `seed`, run its reader, put the file back; the
    exception that is not a QuiverError, or None."""
    rel, reader = READERS[kind]
    path = root / rel
    original = originals.setdefault(rel, path.read_bytes())
    path.write_bytes(mutate(original, random.Random(seed)))
    try:
        reader(root, rel)
    except QuiverError:
        return None
    except Exception as exc:  # what the CLI reports as an internal error (exit 3)
        return exc
    finally:
        path.write_bytes(original)
    return None
