"""Project configuration: `quiver.toml` (top level or `[tool.quiver]`) or `[tool.quiver]` in pyproject.toml."""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from quiver.errors import ConfigError, Position
from quiver.globs import AgentGlob
from quiver.host_ids import AGENT_HOSTS, HOST_IDS
from quiver.model import JSON

AGENT_HOST_IDS = AGENT_HOSTS  # the hosts that run agent files and sessions (`sessions`), not the model APIs

DEFAULT_THRESHOLD = 30
# Models whose host supports tool search (DESIGN §3): Claude Sonnet/Opus 4+, GPT-5.4+, or unset.
DEFAULT_TOOL_SEARCH_MODELS = (
    r"claude[-_ ]?(sonnet|opus|mythos|fable)[-_ ]?([4-9]|\d\d)",
    r"claude[-_ ]?([4-9]|\d\d)([-_.]\d+)?[-_ ]?(sonnet|opus)",
    r"^(sonnet|opus)$",
    r"(mythos|fable)",
    r"gpt-?(5\.([4-9]|\d\d)|([6-9]|\d\d)(\.\d+)?)",
)
KEYS = frozenset(
    {
        "agents",
        "mcp_configs",
        "lock",
        "out",
        "tool_search",
        "threshold",
        "budget_tokens",
        "tool_search_models",
        "select",
        "ignore",
        "severity",
        "servers",
        "tools",
        "ledger",
        "mcp_servers",
        "extend_select",
        "per_file_ignores",
        "routes",
        "search",
        "exclude",
        "host",
        "hosts",
        "agent_hosts",
        "sessions",
        "flows",
    }
)
AGENT_KINDS = ("copilot", "claude", "chatmode")
# Keys of a `servers.NAME` / `tools."server/tool"` execution-policy table (DESIGN §7; checked in policy.py).
POLICY_KEYS = frozenset(
    {
        "timeout_ms",
        "retry",
        "approval",
        "side_effect",
        "reconcile",
        "idempotency_key_argument",
        "honours_idempotency_key",
        "transient_errors",
    }
)
# Keys of those tables that are not execution policy: split out by `config_from_table`.
CAPABILITIES_KEY = "capabilities"  # label overrides (issue 28: quiver.capabilities.overrides)
SERVER_KEYS = POLICY_KEYS | {CAPABILITIES_KEY}
TOOL_KEYS = POLICY_KEYS | {"examples", CAPABILITIES_KEY}
CAPABILITY_LABELS = ("untrusted_input", "private_data", "exfiltration", "destructive")  # quiver.capabilities' LABELS
FLOWS_KEYS = frozenset({"enforce"})
# Keys of a `[[mcp_servers]]` entry: its name, the loading settings, and a server definition's fields.
MCP_SERVER_KEYS = frozenset(
    {"name", "preload", "preload_tools", "deferTools", "description", "tools", "timeout_ms", "timeout"}
    | {"type", "command", "args", "env", "envFile", "cwd", "url", "headers"}
)


@dataclass(frozen=True, slots=True)
class Config:
    path: str | None = None
    agents: tuple[AgentGlob, ...] = ()
    exclude: tuple[str, ...] = ()  # globs of files that are not agents (or skills)
    host: str | None = None  # the host of every agent (else inferred per agent: quiver.hosts.infer)
    hosts: Mapping[str, Mapping[str, JSON]] = field(default_factory=dict)  # host id -> its settings
    agent_hosts: Mapping[str, str] = field(default_factory=dict)  # agent id -> host id
    sessions: tuple[str, ...] = ()  # hosts whose main session (no agent file) is compiled too
    mcp_configs: tuple[str, ...] = ()
    lock: str = "quiver.lock.json"
    out: str = "build/quiver"
    tool_search: Literal["auto", "always", "never"] = "auto"
    threshold: int = DEFAULT_THRESHOLD
    budget_tokens: int | None = None
    tool_search_models: tuple[str, ...] = DEFAULT_TOOL_SEARCH_MODELS
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    severity: Mapping[str, str] = field(default_factory=dict)
    servers: Mapping[str, Mapping[str, JSON]] = field(default_factory=dict)  # per-server policy
    tools: Mapping[str, Mapping[str, JSON]] = field(default_factory=dict)  # per-tool policy, "server/tool"
    ledger: str = ".quiver/ledger.db"
    mcp_servers: tuple[Mapping[str, JSON], ...] = ()
    per_file_ignores: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    routes: str = ".quiver/routes.yaml"
    search: Literal["semantic", "lexical"] = "semantic"  # tool search ranking (`quiver.search.build_index`)
    examples: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # "server/tool" -> user requests
    # ("servers", name) / ("tools", "server/tool") -> {label: bool}: the `capabilities` of those tables
    capabilities: Mapping[tuple[str, str], Mapping[str, bool]] = field(default_factory=dict)
    flows_enforce: bool = False  # `[flows] enforce`: the gateway asks before a sink once untrusted input came in
    # (key, line, column) of each key quiver does not know; a policy table's key is dotted: `servers.time.timeout`
    unknown_keys: tuple[tuple[str, int, int], ...] = ()
    positions: Mapping[tuple[str, ...], tuple[int, int]] = field(default_factory=dict)  # key path -> line, column

    def position(self, *path: str) -> Position:
        """Where the key at `path` (or its nearest enclosing table) is written in the config file."""
        for end in range(len(path), 0, -1):
            if path[:end] in self.positions:
                return Position(self.path or "quiver.toml", *self.positions[path[:end]])
        return Position(self.path or "quiver.toml")


def load_config(root: Path) -> Config:
    """Read `quiver.toml`, else `[tool.quiver]` of pyproject.toml, else defaults."""

    for name in ("quiver.toml", "pyproject.toml"):
        path = root / name
        if not path.exists():
            continue
        from quiver.sources._toml import parse_toml  # tomllib is loaded only when there is a file to read
        from quiver.sources.files import read_text

        text = read_text(path, name)  # a regular file within the size limit, UTF-8 (else one error line)
        data = parse_toml(text, name)
        nested = name == "pyproject.toml" or "quiver" in data.get("tool", {})
        table = data.get("tool", {}).get("quiver") if nested else data
        if table is None:
            continue
        paths = key_paths(text, nested=nested)
        config = config_from_table(table, name, _locator(paths, functools.partial(key_position, text, nested=nested)))
        return _with_policy_keys(config, paths, text)
    return Config()


def _locator(
    paths: Mapping[tuple[str, ...], tuple[int, int]], top: Callable[[str], tuple[int, int]]
) -> Callable[[str], tuple[int, int]]:
    """Where a key is written: a dotted one (`severity.AGT011`) by its path, a top-level one by `key_position`."""
    dotted = {".".join(path): where for path, where in reversed(list(paths.items()))}
    return lambda key: dotted.get(key) or top(key)


def key_position(text: str, key: str, *, nested: bool) -> tuple[int, int]:
    """Line and column of `key = ...` (or its `[key]` table header) in the quiver table of a TOML file."""

    prefix = r"tool\.quiver" if nested else r"(tool\.quiver)?"
    own = re.compile(rf"^\s*\[\[?\s*{prefix}\s*\]\]?\s*(#.*)?$")
    sub = re.compile(rf"^\s*\[\[?\s*{prefix}\.?{re.escape(key)}\s*[\].]")
    assign = re.compile(rf"^(\s*)[\"']?{re.escape(key)}[\"']?\s*[=.]")
    inside = not nested
    for number, line in enumerate(text.replace("\r\n", "\n").split("\n"), start=1):
        if line.lstrip().startswith("["):
            if sub.match(line) and (nested or not line.lstrip().startswith("[tool.") or "quiver" in line):
                return number, line.index("[") + 1
            inside = bool(own.match(line))
            continue
        if inside and (match := assign.match(line)):
            return number, len(match.group(1)) + 1
    return 0, 0


def config_from_table(
    table: Mapping[str, JSON], name: str, where: Callable[[str], tuple[int, int]] = lambda key: (0, 0)
) -> Config:
    def fail(key: str, what: str) -> ConfigError:
        return ConfigError(
            f"`{key}` must be {what}", position=Position(name, *where(key)), hint=f"see README, `[tool.quiver]` {key}"
        )

    def strings(key: str) -> tuple[str, ...]:
        value = table.get(key, [])
        if isinstance(value, str):
            return (value,)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise fail(key, "a list of strings")
        return tuple(value)

    def project_globs(key: str) -> tuple[str, ...]:  # a committed config reads only inside the project
        globs = strings(key)
        for glob in globs:
            if glob.startswith(("/", "~", "\\")) or ".." in glob.replace("\\", "/").split("/") or ":" in glob[:2]:
                raise fail(key, f"paths inside the project (relative, without `..`), not {glob!r}")
        return globs

    def text(key: str, default: str) -> str:
        value = table.get(key, default)
        if not isinstance(value, str):
            raise fail(key, "a string")
        return value

    def tables(key: str) -> dict[str, Mapping[str, JSON]]:
        value = table.get(key, {})
        if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
            raise fail(key, "a table of tables")
        return dict(value)

    tool_search = table.get("tool_search", "auto")
    if tool_search not in ("auto", "always", "never"):
        raise fail("tool_search", '"auto", "always" or "never"')
    threshold = table.get("threshold", DEFAULT_THRESHOLD)
    if not isinstance(threshold, int) or isinstance(threshold, bool) or threshold < 0:
        raise fail("threshold", "a whole number >= 0")
    budget = table.get("budget_tokens")
    if budget is not None and (not isinstance(budget, int) or isinstance(budget, bool) or budget < 0):
        raise fail("budget_tokens", "a whole number >= 0")
    severity = table.get("severity", {})
    if not isinstance(severity, dict):
        raise fail("severity", 'a table of rule = "error" | "warning" | "info"')
    for code, level in severity.items():
        if level not in ("error", "warning", "info"):
            raise fail(f"severity.{code}", f'"error", "warning" or "info" (not {level!r})')
    mcp_servers = table.get("mcp_servers", [])
    if not isinstance(mcp_servers, list) or not all(isinstance(v, dict) for v in mcp_servers):
        raise fail("mcp_servers", "a list of tables (`[[tool.quiver.mcp_servers]]`)")
    pfi = table.get("per_file_ignores", {})
    if not isinstance(pfi, dict):
        raise fail("per_file_ignores", "a table of glob = [rule ids]")
    models = strings("tool_search_models") if "tool_search_models" in table else DEFAULT_TOOL_SEARCH_MODELS
    search = table.get("search", "semantic")
    if search not in ("semantic", "lexical"):
        raise fail("search", '"semantic" or "lexical"')
    tools, examples = _split_examples(tables("tools"), fail)
    servers, server_caps = _split_capabilities("servers", tables("servers"), fail)
    tools, tool_caps = _split_capabilities("tools", tools, fail)
    flows = table.get("flows", {})
    if not isinstance(flows, dict):
        raise fail("flows", "a table (`[flows]`, key `enforce`)")
    for name in sorted(set(flows) - FLOWS_KEYS):
        raise fail(f"flows.{name}", "`enforce`, the one key of `[flows]`")
    if not isinstance(flows.get("enforce", False), bool):
        raise fail("flows.enforce", "true or false")
    unknown = tuple((k, *where(k)) for k in sorted(table) if k not in KEYS)
    host = table.get("host")
    if host is not None and host not in HOST_IDS:
        raise fail("host", f"one of {', '.join(HOST_IDS)}")
    agent_hosts = table.get("agent_hosts", {})
    if not isinstance(agent_hosts, dict):
        raise fail("agent_hosts", "a table of agent id = host")
    for agent, value in agent_hosts.items():
        if value not in HOST_IDS:
            raise fail(f"agent_hosts.{agent}", f"one of {', '.join(HOST_IDS)}")
    sessions = strings("sessions")
    for ident in sessions:
        if ident not in AGENT_HOST_IDS:
            raise fail("sessions", f"a list of hosts: {', '.join(AGENT_HOST_IDS)}")
    return Config(
        path=name,
        sessions=sessions,
        agents=_agent_globs(table.get("agents", []), fail, inside=project_globs),
        exclude=strings("exclude"),
        host=host,
        hosts=_host_settings(tables("hosts"), fail),
        agent_hosts=dict(agent_hosts),
        mcp_configs=project_globs("mcp_configs"),
        lock=text("lock", "quiver.lock.json"),
        out=text("out", "build/quiver"),
        tool_search=tool_search,
        threshold=threshold,
        budget_tokens=budget,
        tool_search_models=models,
        select=strings("select") + strings("extend_select"),
        ignore=strings("ignore"),
        severity=dict(severity),
        servers=servers,
        tools=tools,
        ledger=text("ledger", ".quiver/ledger.db"),
        mcp_servers=tuple(mcp_servers),
        per_file_ignores={k: tuple(v) if isinstance(v, list) else (str(v),) for k, v in pfi.items()},
        routes=text("routes", ".quiver/routes.yaml"),
        search=search,
        examples=examples,
        capabilities={**server_caps, **tool_caps},
        flows_enforce=bool(flows.get("enforce", False)),
        unknown_keys=unknown,
    )


def _agent_globs(
    value: JSON, fail: Callable[[str, str], ConfigError], *, inside: Callable[[str], tuple[str, ...]]
) -> tuple[AgentGlob, ...]:
    """`agents`: globs, or tables `{path, kind, host}` (`[[agents]]`); each inside the project (`inside`
    checks the plain globs, and the tables' paths the same way)."""
    if isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        return tuple(AgentGlob(g) for g in inside("agents"))
    what = 'a list of globs, or of tables `{path = "...", kind = "claude"}`'
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list):
        raise fail("agents", what)
    out = []
    for i, item in enumerate(items):
        if isinstance(item, str):
            out.append(AgentGlob(item))
            continue
        if not isinstance(item, dict) or not isinstance(item.get("path"), str) or not item["path"].strip():
            raise fail("agents", what)
        unknown = sorted(set(item) - {"path", "kind", "host"})
        if unknown:
            raise fail(f"agents.{unknown[0]}", f"one of `path`, `kind`, `host` in an `agents` table (entry {i + 1})")
        path = item["path"]
        if path.startswith(("/", "~", "\\")) or ".." in path.replace("\\", "/").split("/") or ":" in path[:2]:
            raise fail("agents.path", f"paths inside the project (relative, without `..`), not {path!r}")
        kind, host = item.get("kind"), item.get("host")
        if kind is not None and kind not in AGENT_KINDS:
            raise fail("agents.kind", f"one of {', '.join(AGENT_KINDS)}")
        if host is not None and host not in HOST_IDS:
            raise fail("agents.host", f"one of {', '.join(HOST_IDS)}")
        out.append(AgentGlob(item["path"], kind, host))
    return tuple(out)


def _host_settings(
    tables: Mapping[str, Mapping[str, JSON]], fail: Callable[[str, str], ConfigError]
) -> dict[str, Mapping[str, JSON]]:
    """`[hosts.<id>]`: each host's settings, checked against the keys that host takes."""
    from quiver.hosts import host as host_of

    out: dict[str, Mapping[str, JSON]] = {}
    for ident, settings in tables.items():
        if ident not in HOST_IDS:
            raise fail(f"hosts.{ident}", f"a table named after a host: one of {', '.join(HOST_IDS)}")
        known = host_of(ident).settings
        for key, value in settings.items():
            if key not in known:
                raise fail(f"hosts.{ident}.{key}", f"one of {', '.join(sorted(known))} for {ident}")
            if key == "model" and not (isinstance(value, str) and value.strip()):
                raise fail(f"hosts.{ident}.model", "a model name")
            if key == "enable_tool_search" and not _tool_search_setting(value):
                raise fail(f"hosts.{ident}.{key}", '"true", "false", "auto" or "auto:N" (N a whole number 0-100)')
            if key in ("context_window", "virtual_tools_threshold") and not (
                isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 100_000_000
            ):
                raise fail(f"hosts.{ident}.{key}", "a whole number >= 0")
            if key == "provider" and value not in ("github", "anthropic", "openai", "azure"):
                what = '"github" (the default) or a custom provider type ("anthropic", ...)'
                raise fail(f"hosts.{ident}.{key}", what)
            if key in ("tool_search", "offline") and not isinstance(value, bool):
                raise fail(f"hosts.{ident}.{key}", "true or false")
        out[ident] = dict(settings)
    return out


def _tool_search_setting(value: JSON) -> bool:
    """A value of Claude Code's ENABLE_TOOL_SEARCH as quiver.toml may give it."""
    if isinstance(value, bool):
        return True
    if not isinstance(value, str):
        return False
    text = value.strip().lower()
    if text in ("", "true", "false", "auto"):
        return True
    return text.startswith("auto:") and text[5:].isdigit() and int(text[5:]) <= 100


def unknown_key_hint(key: str) -> str:
    """A did-you-mean for an unknown quiver config key (dotted for a policy table's: `servers.time.timeout`)."""
    import difflib  # loaded only for a misspelt key

    head, _, rest = key.partition(".")
    leaf = key.rsplit(".", 1)[-1]
    if rest and leaf in KEYS:  # `threshold = 3` written under `[servers.x]`: TOML put it in that table
        return (
            f"`{leaf}` is a top-level key, but TOML puts every key after a `[table]` header into that table: "
            "move it above the first table header"
        )
    if head == "mcp_servers" and rest:
        guess = difflib.get_close_matches(leaf, sorted(MCP_SERVER_KEYS), n=1)
        return f"did you mean `{guess[0]}`?" if guess else f"an entry takes {', '.join(sorted(MCP_SERVER_KEYS))}"
    if rest:
        known = TOOL_KEYS if head == "tools" else SERVER_KEYS
        guess = difflib.get_close_matches(key.rsplit(".", 1)[-1], sorted(known), n=1)
        return f"did you mean `{guess[0]}`?" if guess else f"an execution policy takes {', '.join(sorted(known))}"
    guess = difflib.get_close_matches(key, sorted(KEYS), n=1)
    return f"did you mean `{guess[0]}`?" if guess else "see README, `[tool.quiver]` keys"


def unknown_key_warnings(config: Config) -> list[str]:
    """One `warning:` line per unknown key (compile's form; lint reports QVR003 instead)."""
    return [
        f"warning: {Position(config.path or 'quiver.toml', line, col)}: unknown key `{key}` in the quiver config "
        f"({unknown_key_hint(key)})"
        for key, line, col in config.unknown_keys
        if "." not in key or key.startswith("mcp_servers.")  # an unknown policy key is an error in compile
    ]


def _with_policy_keys(config: Config, paths: Mapping[tuple[str, ...], tuple[int, int]], text: str) -> Config:
    """The config with its key positions, and each unknown key of a `servers.*` / `tools.*` table or of a
    `[[mcp_servers]]` entry added (`mcp_servers.NAME.key`)."""

    unknown = list(config.unknown_keys)
    for head, tables, known in (("servers", config.servers, SERVER_KEYS), ("tools", config.tools, TOOL_KEYS)):
        for name, entry in sorted(tables.items()):
            for key in sorted(k for k in entry if k not in known):
                unknown.append((f"{head}.{name}.{key}", *paths.get((head, name, key), (0, 0))))
    blocks = array_key_positions(text, "mcp_servers") if config.mcp_servers else []
    for i, entry in enumerate(config.mcp_servers):
        given = entry.get("name")
        name = given if isinstance(given, str) else str(i + 1)
        header, keys = blocks[i] if i < len(blocks) else (0, {})
        for key in sorted(k for k in entry if k not in MCP_SERVER_KEYS):
            unknown.append((f"mcp_servers.{name}.{key}", *keys.get(key, (header, 1 if header else 0))))
    return dataclasses.replace(config, unknown_keys=tuple(unknown), positions=dict(paths))


def array_key_positions(text: str, table: str) -> list[tuple[int, dict[str, tuple[int, int]]]]:
    """For each entry of the array of tables `table`, in order: its line and the line and column of each of
    its keys. An entry is a `[[table]]` header and the `key =` lines below it, or an inline table of
    `table = [{key = ...}, ...]`."""

    header = re.compile(rf"^\s*\[\[\s*(tool\.quiver\.)?{table}\s*\]\]")
    inline = re.compile(rf"^\s*(tool\.quiver\.)?{table}\s*=\s*\[")
    key = re.compile(r"""^(\s*)("(?:[^"\\]|\\.)*"|'[^']*'|[A-Za-z0-9_-]+)\s*=""")
    out: list[tuple[int, dict[str, tuple[int, int]]]] = []
    current: dict[str, tuple[int, int]] | None = None
    text = text.replace("\r\n", "\n")
    start = 0
    for number, line in enumerate(text.split("\n"), start=1):
        if header.match(line):
            current = {}
            out.append((number, current))
        elif line.lstrip().startswith("["):
            current = None
        elif current is not None and (match := key.match(line)):
            current.setdefault(match.group(2).strip("\"'"), (number, len(match.group(1)) + 1))
        elif current is None and (match := inline.match(line)):
            out.extend(_inline_tables(text, start + match.end() - 1))
        start += len(line) + 1
    return out


def _inline_tables(text: str, at: int) -> list[tuple[int, dict[str, tuple[int, int]]]]:
    """The inline tables of the TOML array opening at `text[at]` (`[`): for each, its line and the line and
    column of each of its keys. Strings and comments are stepped over; nested values are not entries."""

    from quiver.sources._toml import line_col, skip_string

    key = re.compile(r"""("(?:[^"\\]|\\.)*"|'[^']*'|[A-Za-z0-9_-]+)\s*[=.]""")
    out: list[tuple[int, dict[str, tuple[int, int]]]] = []
    current: dict[str, tuple[int, int]] | None = None
    depth, wants_key, i = 0, False, at
    while i < len(text):
        ch = text[i]
        found = key.match(text, i) if current is not None and depth == 2 and wants_key else None
        if found is not None and current is not None:
            current.setdefault(found.group(1).strip("\"'"), line_col(text, i))
            wants_key, i = False, found.end()
            continue
        if ch in "\"'":
            i = skip_string(text, i)
            continue
        if ch == "#":
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        if ch in "[{":
            depth += 1
            if ch == "{" and depth == 2:
                current = {}
                out.append((line_col(text, i)[0], current))
                wants_key = True
        elif ch in "]}":
            depth -= 1
            if depth <= 1:
                current = None
            if depth == 0:
                break
        elif ch == "," and depth == 2:
            wants_key = True
        i += 1
    return out


_KEY_PART = r"\s*(\"(?:[^\"\\]|\\.)*\"|'[^']*'|[A-Za-z0-9_-]+)\s*"


def _dotted(text: str) -> tuple[str, ...] | None:
    """The parts of a TOML dotted key (`tools."a/b".retry`), or None when `text` is not one."""
    found = _dotted_parts(text)
    return None if found is None else found[0]


def _dotted_parts(text: str) -> tuple[tuple[str, ...], int] | None:
    """The parts of a TOML dotted key and the offset in `text` where its last part starts, or None."""

    parts = []
    for piece in re.finditer(rf"{_KEY_PART}(\.|$)", text):
        parts.append(piece.group(1).strip("\"'"))
        if not piece.group(2):
            return (tuple(parts), piece.start(1)) if piece.end() == len(text) else None
    return None


def key_paths(text: str, *, nested: bool) -> dict[tuple[str, ...], tuple[int, int]]:
    """Line and column of every key of the quiver table, by key path (a table header counts as its key;
    keys of a one-line inline table are found too). The first place a path is written wins."""

    found: dict[tuple[str, ...], tuple[int, int]] = {}
    table: tuple[str, ...] | None = () if not nested else None
    for number, line in enumerate(text.replace("\r\n", "\n").split("\n"), start=1):
        stripped = line.strip()
        if stripped.startswith("["):
            header = _dotted(stripped[1 : stripped.index("]")].strip("[ ")) if "]" in stripped else None
            if header and header[:2] == ("tool", "quiver"):
                table = header[2:]
            elif header and not nested and header[0] != "tool":
                table = header
            else:
                table = None
            if table:
                found.setdefault(table, (number, line.index("[") + 1))
            continue
        if table is None or "=" not in line:
            continue
        left, _, right = line.partition("=")
        dotted = _dotted_parts(left.strip())
        if not dotted:
            continue
        key, last = dotted
        path = table + key
        found.setdefault(path, (number, len(left) - len(left.lstrip()) + last + 1))  # a dotted key's last part
        if right.strip().startswith("{"):
            brace = len(left) + 1 + right.index("{")
            for inner, column in _inline_keys(line, brace):
                found.setdefault((*path, *inner), (number, column))
    return found


_KEY_TEXT = r"\"(?:[^\"\\]|\\.)*\"|'[^']*'|[A-Za-z0-9_-]+"
_INLINE_KEY = rf"[ \t]*((?:(?:{_KEY_TEXT})[ \t]*\.[ \t]*)*(?:{_KEY_TEXT}))[ \t]*="


def _inline_keys(line: str, at: int) -> list[tuple[tuple[str, ...], int]]:
    """The keys of the one-line inline table opening at `line[at]` (`{`), nested tables' keys by their path
    from it, each with the 1-based column of its last part (arrays' contents are not keys of the table)."""

    from quiver.sources._toml import skip_string

    key = re.compile(_INLINE_KEY)
    out: list[tuple[tuple[str, ...], int]] = []
    tables: list[tuple[str, ...]] = [()]
    arrays, wants_key, i = 0, True, at + 1
    while i < len(line) and tables:
        found = key.match(line, i) if wants_key and not arrays else None
        if found is not None:
            dotted = _dotted_parts(found.group(1))
            if dotted is None:
                break
            path = (*tables[-1], *dotted[0])
            out.append((path, found.start(1) + dotted[1] + 1))
            i = found.end()
            rest = line[i:].lstrip(" \t")
            wants_key = rest.startswith("{")
            if wants_key:
                tables.append(path)
                i = len(line) - len(rest) + 1
            continue
        ch = line[i]
        if ch in "\"'":
            i = skip_string(line, i)
            continue
        if ch == "[":
            arrays += 1
        elif ch == "]":
            arrays -= 1
        elif ch == "{" and arrays:
            arrays += 1  # an inline table inside an array: stepped over as an array level
        elif ch == "}":
            if arrays:
                arrays -= 1
            else:
                tables.pop()
        elif ch == "," and not arrays:
            wants_key = True
        elif ch == "#":
            break
        i += 1
    return out


def _split_examples(
    tools: dict[str, Mapping[str, JSON]], fail: Callable[[str, str], ConfigError]
) -> tuple[dict[str, Mapping[str, JSON]], dict[str, tuple[str, ...]]]:
    """Per-tool tables without their `examples` (requests users write for search), and those examples."""
    policies: dict[str, Mapping[str, JSON]] = {}
    examples: dict[str, tuple[str, ...]] = {}
    for name, entry in tools.items():
        given = entry.get("examples")
        if given is not None:
            if not isinstance(given, list) or not all(isinstance(v, str) and v.strip() for v in given):
                raise fail(f"tools.{name}.examples", "a list of non-empty strings (requests that should find it)")
            examples[name] = tuple(v.strip() for v in given)
        policies[name] = {k: v for k, v in entry.items() if k != "examples"}
    return policies, examples


def _split_capabilities(
    head: str, tables: dict[str, Mapping[str, JSON]], fail: Callable[[str, str], ConfigError]
) -> tuple[dict[str, Mapping[str, JSON]], dict[tuple[str, str], Mapping[str, bool]]]:
    """`servers.NAME` / `tools."server/tool"` tables without their `capabilities` (label overrides), and those."""
    policies: dict[str, Mapping[str, JSON]] = {}
    overrides: dict[tuple[str, str], Mapping[str, bool]] = {}
    for name, entry in tables.items():
        given = entry.get(CAPABILITIES_KEY)
        if given is not None:
            where = f"{head}.{name}.{CAPABILITIES_KEY}"
            if not isinstance(given, dict):
                raise fail(where, "a table of label = true | false, e.g. { private_data = false }")
            for label, value in given.items():
                if label not in CAPABILITY_LABELS:
                    raise fail(f"{where}.{label}", f"one of {', '.join(CAPABILITY_LABELS)} (not {label!r})")
                if not isinstance(value, bool):
                    raise fail(f"{where}.{label}", "true or false")
            overrides[(head, name)] = dict(given)
        policies[name] = {k: v for k, v in entry.items() if k != CAPABILITIES_KEY}
    return policies, overrides
