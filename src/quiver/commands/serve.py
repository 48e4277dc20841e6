"""`quiver serve MANIFEST`: the MCP gateway of one compiled manifest, over stdio or streamable HTTP.

`mcp` is imported only once a gateway is about to run (it costs about a second), never by `quiver --help`.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from quiver.commands.outcome import Outcome
from quiver.errors import UsageError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from quiver.runtime._manifest import ManifestServer
    from quiver.runtime.gateway_index import SearchSetup
    from quiver.runtime.protocol import Executor, PolicyHook

LOG_LEVELS = ("debug", "info", "warning", "error")
DEFAULT_HOST = "127.0.0.1"
TOKEN_ENV = "QUIVER_TOKEN"


def parse_address(value: str) -> tuple[str, int]:
    """`PORT`, `HOST:PORT` or `[IPV6]:PORT` -> (host, port); the host defaults to 127.0.0.1."""
    host, sep, port_text = value.rpartition(":")
    if not sep:
        host, port_text = DEFAULT_HOST, value
    host = host.strip("[]") or DEFAULT_HOST
    try:
        port = int(port_text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise UsageError(
            f"--http `{value}` is not HOST:PORT", hint="for example --http 127.0.0.1:8765; port 0 picks a free port"
        )
    return host, port


def resolve_token(token: str | None, environ: dict[str, str] | None = None) -> str:
    env = os.environ if environ is None else environ
    value = (token if token is not None else env.get(TOKEN_ENV, "")).strip()
    if not value:
        raise UsageError(
            "serving over HTTP needs a bearer token",
            hint=f"set {TOKEN_ENV}, or pass --token; the variable stays out of the process list",
        )
    return value


def configure_logging(level: str) -> None:
    """Everything to stderr: in stdio mode stdout is the protocol."""
    import logging  # here: the CLI imports this module (LOG_LEVELS) on every start-up

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("quiver serve: %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    logging.getLogger("quiver").setLevel(level.upper())


@dataclass(frozen=True, slots=True)
class ServeOptions:
    manifest: Path
    project: Path | None = None  # the project root; None: the manifest's project
    http: str | None = None  # [HOST:]PORT for streamable HTTP; None: stdio
    token: str | None = None  # the bearer token over HTTP (default: $QUIVER_TOKEN)
    startup_timeout: float | None = None
    log_level: str = "info"
    ledger: str | None = None
    no_ledger: bool = False
    allow_hosts: tuple[str, ...] = ()
    allow_origins: tuple[str, ...] = ()


def run(options: ServeOptions, *, executor: Executor | None = None) -> Outcome:
    """Serve the manifest until the client leaves (stdio) or a signal arrives; the log streams to stderr.
    The exit code: 0 when the client left or after SIGTERM, 130 after SIGINT.

    The project (`-C`, else the manifest's nearest ancestor with a quiver config, an MCP config or
    `.git`, else the working directory) holds both the usage records and the durable ledger every
    permitted call runs through (`--ledger`, else QUIVER_LEDGER_URL, else the config's `ledger`,
    relative to that project); `no_ledger` runs calls directly instead. `executor` replaces the one
    these would build (a test's, or a replica's on a shared ledger).
    """
    from quiver.extras import require

    require("serve", "`quiver serve`")
    from quiver.runtime._manifest import load_manifest  # `mcp` and the runtime: only once `serve` is installed
    from quiver.runtime.usage import project_root_of

    o, project, http = options, options.project, options.http
    manifest_path = o.manifest
    if project is not None and not manifest_path.is_absolute() and (project / manifest_path).is_file():
        manifest_path = project / manifest_path
    manifest = load_manifest(manifest_path)
    root = project or project_root_of(manifest_path, default=Path.cwd())
    check_inputs(manifest.servers, os.environ, root=root, manifest=manifest_path)
    address = parse_address(http) if http is not None else None
    bearer = resolve_token(o.token) if address is not None else None
    if (o.allow_hosts or o.allow_origins) and address is None:
        raise UsageError("--allow-host and --allow-origin apply to --http", hint="add --http HOST:PORT")
    if address is not None and address[0] in ("0.0.0.0", "::") and not o.allow_hosts:
        raise UsageError(
            f"--http {http} listens on every address, so no Host header is allowed by default",
            hint="name the host clients use: --allow-host gateway.example.com:* (see README, serve --http)",
        )
    if o.startup_timeout is not None and o.startup_timeout <= 0:
        raise UsageError("--startup-timeout must be positive")
    configure_logging(o.log_level)

    import anyio

    from quiver.runtime.gateway import Gateway
    from quiver.runtime.serve import serve_http, serve_stdio, write_ready
    from quiver.runtime.telemetry import configure_tracing

    if executor is None:
        from quiver.runtime.direct import DirectExecutor
        from quiver.runtime.flow_guard import FlowGuard

        hook = FlowGuard(manifest) if manifest.flows_enforce else None  # `[flows] enforce` in the quiver config
        executor = DirectExecutor(hook=hook) if o.no_ledger else ledger_executor(root, o.ledger, hook=hook)
    provider = configure_tracing(None, environ=os.environ)

    from quiver.runtime.usage import USAGE_DIR, UsageRecorder, usage_path
    from quiver.sources.files import machine_dir

    machine_dir(root / USAGE_DIR)
    recorder = UsageRecorder(usage_path(root, manifest.agent_id), clock=time.time, agent=manifest.agent_id)
    gateway = Gateway(
        manifest, executor=executor, startup_timeout_s=o.startup_timeout, recorder=recorder, search=search_setup(root)
    )
    try:
        if address is None:
            code = anyio.run(serve_stdio, gateway)
        else:
            assert bearer is not None
            serving = partial(
                serve_http, gateway, address[0], address[1], bearer, ready=write_ready,
                allow_hosts=o.allow_hosts, allow_origins=o.allow_origins,
            )  # fmt: skip
            code = anyio.run(serving)
    finally:
        if provider is not None:
            provider.shutdown()
    return Outcome(code=code)


def check_inputs(
    servers: Mapping[str, ManifestServer],
    environ: Mapping[str, str],
    *,
    root: Path | None = None,
    manifest: Path | None = None,
) -> None:
    """Every `${input:id}` the servers' transports hold has its QUIVER_INPUT_<ID> set: else refuse to
    start, naming each one where the project defines its server (the manifest's `source`), rather than
    fail on the first call. (A VS Code input is never in the environment by accident; other variables
    may be set later for servers a session never uses.)"""
    from quiver.errors import InputError, InputErrors
    from quiver.variables import REFERENCE, expand

    missing: list[InputError] = []
    for name in sorted(servers):
        where = server_where(servers[name], root, manifest)
        transport = servers[name].transport
        values: list[object] = [transport.get(k) for k in ("command", "cwd", "url")]
        values += list(transport.get("args") or [])
        for key in ("env", "headers"):
            part = transport.get(key)
            values += list(part.values()) if isinstance(part, dict) else []
        for value in values:
            for match in REFERENCE.finditer(str(value) if value is not None else ""):
                try:
                    if match.group("input"):
                        expand(match.group(0), environ, where=where)
                except InputError as exc:
                    missing.append(exc)
    if missing:
        raise InputErrors(tuple(missing))


def server_where(server: ManifestServer, root: Path | None, manifest: Path | None) -> str:
    """`FILE:LINE:COL: server `NAME` (manifest M)`: the definition's place (relative to the working
    directory when under it), as `quiver snapshot` names it; the manifest says which one is served."""
    where = f"server `{server.name}`"
    if server.source and root is not None:
        where = f"{_shown(root / server.source)}: {where}"
    return f"{where} (manifest {_shown(manifest)})" if manifest is not None else where


def _shown(path: Path) -> str:
    try:
        return str(path.absolute().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def search_setup(root: Path) -> SearchSetup:
    """The gateway's search as the project's config sets it (`search`, per-tool `examples`); cache under root."""
    from quiver.config import load_config
    from quiver.runtime.gateway_index import SearchSetup

    config = load_config(root)
    return SearchSetup(root=root, semantic=config.search == "semantic", examples=config.examples)


def ledger_executor(root: Path, ledger: str | None, *, hook: PolicyHook | None = None) -> Executor:
    """A LedgerExecutor on the configured store (a SQLite file, created on first use, or a migrated
    PostgreSQL database), approving through MCP elicitation where the client can; `hook` adjusts each
    call's policy (the flow guard)."""
    from quiver.errors import InputError
    from quiver.runtime.approval import ElicitationApprover
    from quiver.runtime.executor import LedgerExecutor
    from quiver.runtime.ledger import LedgerDamaged, LedgerError
    from quiver.runtime.ledger_open import open_ledger, resolve_ledger

    target = resolve_ledger(root, ledger, os.environ)
    try:
        store = open_ledger(target)
    except LedgerDamaged as exc:  # not a ledger, or damaged: refused before anything ran on it
        raise InputError(str(exc)) from None
    except LedgerError as exc:
        raise InputError(f"cannot open ledger {target.display()}: {exc}") from None
    return LedgerExecutor(store, approver=ElicitationApprover(), hook=hook)
