"""Every position quiver reports comes from a positioned reader, so it does not depend on a file's layout.

The demo project, seeded so that every file kind quiver reads with positions has findings (the lock,
`.mcp.json`, `.vscode/mcp.json`, `.github/mcp.json`, `mcp-config.json`, agent frontmatter, quiver.toml),
is linted as written and again with each file rewritten in other layouts that mean the same: JSON
indented by 4, by 1, with tabs, on one line; YAML indented by 4 with block lists, or with flow lists;
TOML indented, with inline tables (an inline array of tables) or dotted keys. The findings must be the same, each at the
same key or value: a position is compared by what it points at (a JSON pointer, a YAML path, a TOML key
and its occurrence), not by its line, so a minified file (all on line 1) is checked by its columns.
A tools/list snapshot is a side of `quiver diff`, checked the same way.
"""

from __future__ import annotations

import bisect
import functools
import json
import re
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from quiver.cli import cli

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "examples" / "demo"
Anchor = tuple[object, ...]

# ---------------------------------------------------------------- the seeded project

SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # a GitHub token's shape, not a token
SEEDED_SERVER = {
    "type": "stdio",
    "command": "bash",
    "args": ["-c", "curl -fsSL https://get.example.dev/install.sh | sh"],
    "env": {"GITHUB_TOKEN": SECRET, "MODE": "${input:undeclared}"},
    "bogus": True,
}
COPILOT_CONFIG = {
    "mcpServers": {
        "remote": {"type": "sse", "url": "http://mcp.example.dev/sse", "headers": {"Authorization": SECRET}},
        "local": {"command": "uvx", "args": ["mcp-server-time"], "tools": ["*"], "timeout": "soon"},
    }
}
AGENT_SERVERS = f"""mcp-servers:
  inline:
    type: local
    command: npx
    args: ["-y", "some-mcp"]
    env:
      API_TOKEN: "{SECRET}"
    tools: ["*"]
"""
CONFIG_TOML = """\
threshold = 30
budget_tokens = 20000
unknown_top = 1

[[mcp_servers]]
name = "github"
preload_tools = ["search_issues", "issue_read", "search_pull_requests"]
preloadd = true

[[mcp_servers]]
name = "notion"
preload = false

[servers.time]
timeout = 5
bogus_policy = 1
"""
# The same config in other layouts (quiver reads the same values from each).
CONFIG_TOML_LAYOUTS = {
    "tables": CONFIG_TOML,
    "indented": """\
threshold   =   30
  budget_tokens = 20000
    unknown_top = 1

  [[ mcp_servers ]]
    name = "github"
    preload_tools = [ "search_issues",
      "issue_read", "search_pull_requests" ]
    preloadd = true

  [[ mcp_servers ]]
    name = "notion"
    preload = false

  [ servers.time ]
    timeout = 5
    bogus_policy = 1
""",
    "inline": """\
threshold = 30
budget_tokens = 20000
unknown_top = 1
mcp_servers = [
  # the same entries as inline tables
  { name = "github", preload_tools = ["search_issues", "issue_read", "search_pull_requests"], preloadd = true },
  {name="notion",preload=false},
]
servers = { time = { timeout = 5, bogus_policy = 1 } }
""",
    "dotted": """\
threshold = 30
budget_tokens = 20000
unknown_top = 1
servers.time.timeout = 5
servers.time.bogus_policy = 1

[[mcp_servers]]
name = "github"
preload_tools = ["search_issues", "issue_read", "search_pull_requests"]
preloadd = true

[[mcp_servers]]
name = "notion"
preload = false
""",
}


def seeded(base: Path) -> Path:
    """A copy of the demo with findings in every file kind quiver places findings in."""
    root = base / "demo"
    shutil.copytree(DEMO, root, ignore=shutil.ignore_patterns("build", "cache"))
    mcp = json.loads((root / ".mcp.json").read_text(encoding="utf-8"))
    mcp["mcpServers"]["seeded"] = SEEDED_SERVER
    (root / ".mcp.json").write_text(json.dumps(mcp, indent=2) + "\n", encoding="utf-8")
    vscode = (root / ".vscode/mcp.json").read_text(encoding="utf-8")
    entry = json.dumps({**SEEDED_SERVER, "env": {"TOKEN": SECRET, "WHERE": "${env:HOME}"}})
    vscode = vscode.replace('  "servers": {\n', f'  "servers": {{\n    "seeded": {entry},\n', 1)
    (root / ".vscode/mcp.json").write_text(vscode, encoding="utf-8")
    (root / ".github/mcp.json").write_text(json.dumps(COPILOT_CONFIG, indent=2) + "\n", encoding="utf-8")
    (root / "mcp-config.json").write_text(json.dumps(COPILOT_CONFIG, indent=2) + "\n", encoding="utf-8")
    agent = root / ".github/agents/researcher.agent.md"
    agent.write_text(agent.read_text(encoding="utf-8").replace("---\n", "---\n" + AGENT_SERVERS, 1), encoding="utf-8")
    (root / "quiver.toml").write_text(CONFIG_TOML, encoding="utf-8")
    lock = json.loads((root / "quiver.lock.json").read_text(encoding="utf-8"))
    tools = lock["servers"]["time"]["tools"]
    tools.append(tools[0])  # a repeated tool name (TOOL002), at its own entry
    (root / "quiver.lock.json").write_text(json.dumps(lock, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return root


JSON_FILES = ("quiver.lock.json", ".mcp.json", ".vscode/mcp.json", ".github/mcp.json", "mcp-config.json")
AGENT_FILES = tuple(
    p.relative_to(DEMO).as_posix() for p in sorted(DEMO.glob(".github/agents/*.md"))
)  # Copilot agents: YAML frontmatter (Claude Code's repair of non-YAML frontmatter reads lines, not YAML)
JSON_LAYOUTS: dict[str, dict[str, Any]] = {
    "indent4": {"indent": 4},
    "indent1": {"indent": 1},
    "tabs": {"indent": "\t"},
    "minified": {"separators": (",", ":")},
}
YAML_LAYOUTS: dict[str, dict[str, Any]] = {
    "block-indent4": {"default_flow_style": False, "indent": 4},
    "flow-lists": {"default_flow_style": None, "indent": 2},
}
# one lint run per JSON layout, each with a YAML and a TOML layout too
RUNS = [
    (layout, sorted(YAML_LAYOUTS)[i % len(YAML_LAYOUTS)], ("indented", "inline", "dotted", "tables")[i % 4])
    for i, layout in enumerate(JSON_LAYOUTS)
]


def rewrite(root: Path, json_layout: str, yaml_layout: str, toml_layout: str) -> None:
    for rel in JSON_FILES:
        path = root / rel
        data = json.loads(_without_comments(path.read_text(encoding="utf-8")))
        path.write_text(json.dumps(data, ensure_ascii=False, **JSON_LAYOUTS[json_layout]) + "\n", encoding="utf-8")
    for rel in AGENT_FILES:
        path = root / rel
        text = path.read_text(encoding="utf-8")
        _, front, body = text.split("---\n", 2)
        data = yaml.safe_load(front)
        dumped = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=10**6, **YAML_LAYOUTS[yaml_layout])
        assert yaml.safe_load(dumped) == data
        path.write_text(f"---\n{dumped}---\n{body}", encoding="utf-8")
    (root / "quiver.toml").write_text(CONFIG_TOML_LAYOUTS[toml_layout], encoding="utf-8")


_JSONC = re.compile(r'(?P<string>"(?:[^"\\]|\\.)*")|(?P<drop>//[^\n]*|/\*.*?\*/|,(?=\s*[}\]]))|[^"/,]+|[/,]', re.DOTALL)


def _without_comments(text: str) -> str:
    """JSONC as plain JSON: comments and trailing commas dropped (outside strings)."""
    return "".join(m.group() for m in _JSONC.finditer(text) if m.lastgroup != "drop")


# ---------------------------------------------------------------- what a position points at


def _offset(text: str, line: int, column: int) -> int:
    starts = _line_starts(text)
    assert 1 <= line <= len(starts), (line, len(starts))
    return starts[line - 1] + column - 1


@functools.cache
def _line_starts(text: str) -> list[int]:
    starts = [0]
    for part in text.split("\n")[:-1]:
        starts.append(starts[-1] + len(part) + 1)
    return starts


_JSON_TOKEN = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+', re.DOTALL)


def json_anchor(text: str, offset: int) -> Anchor:
    """("key" | "value", JSON pointer, offset inside the token) of the token at `offset`, read independently
    of quiver's readers."""
    starts, spans = _json_spans(text)
    at = bisect.bisect_right(starts, offset) - 1
    assert at >= 0 and spans[at][0] <= offset < spans[at][1], f"offset {offset} is between tokens"
    start, _, kind, pointer = spans[at]
    return (kind, pointer, offset - start)


@functools.cache
def _json_spans(text: str) -> tuple[list[int], list[tuple[int, int, str, tuple[object, ...]]]]:
    """Each token's (start, end, "key" | "value", JSON pointer), in order, and their starts: read once a text."""
    spans: list[tuple[int, int, str, tuple[object, ...]]] = []
    stack: list[dict[str, Any]] = []

    def value_pointer() -> tuple[object, ...]:
        if not stack:
            return ()
        top = stack[-1]
        return (*top["pointer"], top["key"] if top["object"] else top["index"])

    for match in _JSON_TOKEN.finditer(text):
        token, start = match.group(), match.start()
        if token.startswith(("//", "/*")):
            continue
        top = stack[-1] if stack else None
        if token in ("{", "["):
            pointer = value_pointer()
            spans.append((start, match.end(), "value", pointer))
            stack.append({"pointer": pointer, "object": token == "{", "key": None, "index": 0, "wants_key": True})
        elif token in ("}", "]"):
            stack.pop()
        elif token == ":":
            assert top is not None
            top["wants_key"] = False
        elif token == ",":
            assert top is not None
            top["wants_key"] = True
            top["index"] += 1
        elif top is not None and top["object"] and top["wants_key"]:
            top["key"] = json.loads(token)
            spans.append((start, match.end(), "key", (*top["pointer"], top["key"])))
        else:
            spans.append((start, match.end(), "value", value_pointer()))
    return [s[0] for s in spans], spans


def yaml_anchor(front: str, offset: int) -> Anchor:
    """("key" | "value", path, offset inside the scalar's text) of the YAML scalar at `offset` (PyYAML's own
    marks, not quiver's reader); a collection's path when `offset` is its first character."""
    found = _yaml_nodes(front)
    hits = [f for f in found if f[0] <= offset < max(f[1], f[0] + 1) and f[2] != "collection"]
    hits = hits or [f for f in found if f[0] == offset]
    assert hits, f"offset {offset} is on no YAML node"
    start, _, kind, path, quote = min(hits, key=lambda f: f[1] - f[0])
    return (kind, path, max(offset - start - quote, 0))  # a quoted scalar's quote is its text's first place


@functools.cache
def _yaml_nodes(front: str) -> list[tuple[int, int, str, tuple[object, ...], int]]:
    """Each node's (start, end, "key" | "value" | "collection", path, quote width): composed once a text."""
    found: list[tuple[int, int, str, tuple[object, ...], int]] = []

    def visit(node: yaml.Node, path: tuple[object, ...]) -> None:
        if isinstance(node, yaml.MappingNode):
            found.append((node.start_mark.index, node.start_mark.index + 1, "collection", path, 0))
            for key, value in node.value:
                found.append((key.start_mark.index, key.end_mark.index, "key", (*path, key.value), _quote(key)))
                visit(value, (*path, key.value))
        elif isinstance(node, yaml.SequenceNode):
            found.append((node.start_mark.index, node.start_mark.index + 1, "collection", path, 0))
            for index, item in enumerate(node.value):
                visit(item, (*path, index))
        else:
            found.append((node.start_mark.index, node.end_mark.index, "value", path, _quote(node)))

    visit(yaml.compose(front, Loader=yaml.SafeLoader), ())
    return found


def _quote(node: yaml.Node) -> int:
    return 1 if getattr(node, "style", None) in ("'", '"') else 0


def agent_anchor(text: str, offset: int) -> Anchor:
    _, front, _ = text.split("---\n", 2)
    front_start = len("---\n")
    body_start = front_start + len(front) + len("---\n")
    if offset < front_start:
        return ("head", offset)
    if offset >= body_start:
        return ("body", offset - body_start)
    return ("frontmatter", *yaml_anchor(front, offset - front_start))


def toml_anchor(text: str, offset: int) -> Anchor:
    """The key (or table header) at `offset` and which occurrence of that word it is: the layouts above keep
    every key's order."""
    word = re.match(r"[A-Za-z0-9_-]+|\[+", text[offset:])
    assert word, f"offset {offset} is on no key: {text[offset : offset + 20]!r}"
    occurrences = [m.start() for m in re.finditer(rf"(?<![\w-]){re.escape(word.group())}(?![\w-])", text)]
    if word.group().startswith("["):
        occurrences = [m.start() for m in re.finditer(r"^\s*\[", text, re.MULTILINE)]
        occurrences = [o + len(text[o:]) - len(text[o:].lstrip()) for o in occurrences]
    return (word.group(), occurrences.index(offset))


ANCHORS: dict[str, Callable[[str, int], Anchor]] = {
    **dict.fromkeys(JSON_FILES, json_anchor),
    **dict.fromkeys(AGENT_FILES, agent_anchor),
    "quiver.toml": toml_anchor,
}


def lint(root: Path) -> list[dict[str, Any]]:
    result = CliRunner().invoke(cli, ["lint", "-C", str(root), "--format", "json", "--fail-on", "never"])
    assert result.exit_code == 0, result.output
    findings: list[dict[str, Any]] = json.loads(result.stdout)
    return findings


def anchored(root: Path, findings: list[dict[str, Any]]) -> Counter[tuple[object, ...]]:
    """Each finding as (rule, file, message, what its position points at)."""
    out: Counter[tuple[object, ...]] = Counter()
    texts: dict[str, str] = {}
    for finding in findings:
        rel, line, column = finding["file"], finding["line"], finding["column"]
        text = texts.setdefault(rel, (root / rel).read_text(encoding="utf-8"))
        assert line > 0 and column > 0, finding
        anchor = ANCHORS[rel](text, _offset(text, line, column)) if rel in ANCHORS else (line, column)
        out[(finding["rule"], rel, finding["message"], anchor)] += 1
    return out


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> tuple[Counter[tuple[object, ...]], set[str]]:
    root = seeded(tmp_path_factory.mktemp("as-written"))
    findings = lint(root)
    return anchored(root, findings), {f["file"] for f in findings}


def test_the_seeded_demo_has_findings_in_every_file_kind(
    baseline: tuple[Counter[tuple[object, ...]], set[str]],
) -> None:
    found, files = baseline
    assert files >= {*JSON_FILES, *AGENT_FILES, "quiver.toml"}
    assert {"TOOL002", "QVR003", "MCP004"} <= {rule for rule, *_ in found}


@pytest.mark.parametrize(("json_layout", "yaml_layout", "toml_layout"), RUNS, ids=[r[0] for r in RUNS])
def test_findings_point_at_the_same_keys_in_every_layout(
    tmp_path: Path,
    baseline: tuple[Counter[tuple[object, ...]], set[str]],
    json_layout: str,
    yaml_layout: str,
    toml_layout: str,
) -> None:
    root = seeded(tmp_path)
    rewrite(root, json_layout, yaml_layout, toml_layout)
    found = anchored(root, lint(root))
    expected, _ = baseline
    missing, extra = sorted(expected - found, key=str), sorted(found - expected, key=str)
    assert found == expected, f"only as written: {missing[:5]}\nonly rewritten: {extra[:5]}"


# ---------------------------------------------------------------- the sides of `quiver diff`


def _changed(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tools with breaking changes: a type narrowed, a required property added, a property removed."""
    new = json.loads(json.dumps(tools))
    first = new[0]["inputSchema"]
    first["properties"][next(iter(first["properties"]))]["type"] = "integer"
    first["properties"]["extra"] = {"type": "string"}
    first.setdefault("required", []).append("extra")
    second = new[1]["inputSchema"]["properties"]
    del second[next(iter(second))]
    return new


def diff_sides(base: Path, json_layout: str | None) -> tuple[Path, dict[str, str]]:
    """A project with two tools/list files and two locks (old, new), in `json_layout` (None: as written)."""
    from quiver.model import sha256_json

    root = base / "diff"
    root.mkdir(parents=True)
    lock = json.loads((DEMO / "quiver.lock.json").read_text(encoding="utf-8"))
    tools = [entry["tool"] for entry in lock["servers"]["time"]["tools"]]
    changed = _changed(tools)
    new_lock = json.loads(json.dumps(lock))
    new_lock["servers"]["time"]["tools"] = [
        {**entry, "sha256": sha256_json(tool), "tool": tool}
        for entry, tool in zip(lock["servers"]["time"]["tools"], changed, strict=True)
    ]
    files = {
        "old-list.json": {"tools": tools},
        "new-list.json": {"tools": changed},
        "old.lock.json": lock,
        "new.lock.json": new_lock,
    }
    layout = JSON_LAYOUTS[json_layout] if json_layout else {"indent": 2}
    for name, data in files.items():
        (root / name).write_text(json.dumps(data, ensure_ascii=False, **layout) + "\n", encoding="utf-8")
    return root, {"list": "old-list.json new-list.json", "lock": "old.lock.json new.lock.json"}


def diff(root: Path, sides: str) -> list[dict[str, Any]]:
    paths = [str(root / side) for side in sides.split()]
    options = ["--server", "time", "--format", "json", "--fail-on", "never"]
    result = CliRunner().invoke(cli, ["diff", "-C", str(root), *paths, *options])
    assert result.exit_code == 0, result.output
    findings: list[dict[str, Any]] = json.loads(result.stdout)
    return findings


def diff_anchored(root: Path, findings: list[dict[str, Any]]) -> Counter[tuple[object, ...]]:
    out: Counter[tuple[object, ...]] = Counter()
    for finding in findings:
        text = (root / finding["file"]).read_text(encoding="utf-8")
        assert finding["line"] > 0 and finding["column"] > 0, finding
        anchor = json_anchor(text, _offset(text, finding["line"], finding["column"]))
        out[(finding["rule"], finding["file"], finding["message"], anchor)] += 1
    return out


@pytest.mark.parametrize("json_layout", sorted(JSON_LAYOUTS))
@pytest.mark.parametrize("side", ["list", "lock"])
def test_diff_findings_point_at_the_same_keys_of_a_tools_list_or_a_lock_in_every_layout(
    tmp_path: Path, side: str, json_layout: str
) -> None:
    as_written, sides = diff_sides(tmp_path / "as-written", None)
    expected = diff_anchored(as_written, diff(as_written, sides[side]))
    assert len(expected) >= 3
    rewritten, _ = diff_sides(tmp_path / json_layout, json_layout)
    assert diff_anchored(rewritten, diff(rewritten, sides[side])) == expected
