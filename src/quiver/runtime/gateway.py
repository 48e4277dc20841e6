"""The MCP gateway of one manifest: exposes the agent's tools, enforces the manifest, hands calls to an executor.

Built on the SDK's low-level `Server`, so tools/list is computed per session: the preloaded tools under
their model-facing names (schemas from the manifest), the meta-tools while anything is deferred, and
the deferred tools the session loaded (by describe_tool or call_tool; a search hit alone does not
join). A load announces
`notifications/tools/list_changed`: on a handshake-era (2025-11-25) connection on the request's own
channel; on a 2026-07-28 connection through `subscriptions/listen` streams, the only place that era
delivers change notifications (the gateway serves `subscriptions/listen`, which is how that era
advertises `tools.listChanged`).

Every call passes, in order: the allow-list (only tools in the manifest, the agent's resolved set,
whether preloaded or deferred; anything else is refused and logged), argument validation against the
pinned inputSchema (nothing is started or sent for invalid arguments), the pin check (the upstream's
current definition is hashed before the tool's first call on a connection; a mismatch is refused naming
what changed), then `Executor.execute(CallRequest, dispatch)`. Every failure becomes an `isError`
result; nothing a client or an upstream does crashes the gateway.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any, NamedTuple, TextIO

import anyio
import jsonschema
import mcp.types as types
from mcp import MCPError
from mcp.server import Server, ServerRequestContext
from mcp.server.context import HandlerResult
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from quiver import __version__
from quiver.errors import InputError
from quiver.hosts.claude_code import ALWAYS_LOAD_META
from quiver.metatools import META_TOOL_NAMES, META_TOOLS
from quiver.model import JSON
from quiver.regex_budget import NeedsBacktracking, PatternTimeout, bounded_validator, budget, linear_only
from quiver.runtime import input_required, telemetry_mcp
from quiver.runtime._diff import describe_changes
from quiver.runtime._exec_policy import ExecPolicy, checked_policy
from quiver.runtime._manifest import Manifest, ManifestTool
from quiver.runtime.approval import elicitation
from quiver.runtime.direct import DirectExecutor
from quiver.runtime.executor import LedgerExecutor, LedgerOutage
from quiver.runtime.gateway_index import SearchSetup
from quiver.runtime.gateway_meta import DEFAULT_SEARCH_LIMIT, _MetaTools
from quiver.runtime.gateway_results import LEDGER_UNAVAILABLE, _error, _unsnapshotted, ledger_unavailable_error
from quiver.runtime.gateway_scope import GatewayScope, _GatewayServer
from quiver.runtime.ledger import LedgerUnavailable
from quiver.runtime.ledger_open import run_recovery_sweeps
from quiver.runtime.protocol import CallRequest, Executor, UpstreamError
from quiver.runtime.session import GatewaySession, SessionScope
from quiver.runtime.telemetry import rejected_call_span, rejected_tool_span, requested_tool, tracing_configured
from quiver.runtime.upstream import PinCheck, UpstreamManager
from quiver.runtime.usage import NullRecorder, Recorder
from quiver.schema_fast import instance_valid
from quiver.suggest import did_you_mean

__all__ = ["DEFAULT_SEARCH_LIMIT", "Gateway", "GatewayScope"]  # the first and last moved to `gateway_*`

logger = logging.getLogger(__name__)

PATTERN_BUDGET_S = 1.0  # per call, for argument patterns only `re` can match (see `_validate`)
DEFAULT_SWEEP_INTERVAL_S = 5.0  # recovery sweeps of a shared ledger (see docs/scaling.md)
_SESSION_HEADER = "mcp-session-id"
_DROPPED_META = ("progressToken", "progress_token")


class Gateway(_MetaTools):
    """One manifest served as an MCP server. `async with Gateway(manifest) as gw:` then serve `gw.server`."""

    def __init__(
        self,
        manifest: Manifest,
        *,
        executor: Executor | None = None,
        upstreams: UpstreamManager | None = None,
        environ: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        startup_timeout_s: float | None = None,
        errlog: TextIO | None = None,
        recorder: Recorder | None = None,
        search: SearchSetup | None = None,
    ) -> None:
        self.manifest = manifest
        self._search_setup = search or SearchSetup()
        self.executor: Executor = executor or DirectExecutor()
        self.recorder: Recorder = recorder or NullRecorder()
        self._started: set[str] = set()  # sessions the recorder has seen start
        self.upstreams = upstreams or UpstreamManager(
            manifest.servers.values(), environ=environ, cwd=cwd, startup_timeout_s=startup_timeout_s, errlog=errlog
        )
        self._tools = {t.exposed: _tool_object(t) for t in manifest.tools}  # fails fast on a broken manifest
        self._meta_tools = (
            [types.Tool.model_validate(with_always_load(t)) for t in META_TOOLS] if manifest.meta_tools_active else []
        )
        self._meta_schemas = {str(t["name"]): t["inputSchema"] for t in META_TOOLS}
        self._validators: dict[str, tuple[Any, str]] = {}  # tool -> (bounded validator, its dialect)
        self._outage_calls = 0  # calls answered LEDGER_UNAVAILABLE since the ledger last recorded one
        self._index: Any = None
        self.server = self._build_server()

    async def __aenter__(self) -> Gateway:
        if self.manifest.meta_tools_active:  # the search index (and its vectors) is ready before any session
            await anyio.to_thread.run_sync(self._search_index)
        await self.upstreams.__aenter__()
        recover = getattr(self.executor, "recover", None)
        if recover is not None:  # a ledger-backed executor settles what a crashed gateway left behind
            try:
                report = await recover(self.upstreams.dispatch)
            except LedgerUnavailable as exc:  # the sweeps try again; calls meanwhile get LEDGER_UNAVAILABLE
                logger.warning("recovery at start failed: %s", exc)
            else:
                if report.recovered or report.reconciled:
                    logger.warning(
                        "recovered %d action(s), reconciled %d", len(report.recovered), len(report.reconciled)
                    )
        return self

    async def sweep_orphans(self, interval_s: float = DEFAULT_SWEEP_INTERVAL_S) -> None:
        """Until cancelled, settle every `interval_s` the actions of gateways that died (on a shared ledger, a
        dead replica's actions once their lease expires) and ask the reconcile tools of `unknown_outcome`
        actions again (confirmations only, with backoff). No-op without a ledger."""

        if isinstance(self.executor, LedgerExecutor):
            await anyio.sleep(interval_s)  # __aenter__ has just recovered
            await run_recovery_sweeps(self.executor, self.upstreams.dispatch, interval_s=interval_s)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.upstreams.__aexit__(exc_type, exc, tb)
        self.recorder.close()

    def _build_server(self) -> _GatewayServer:
        server = _GatewayServer(
            "quiver",
            version=__version__,
            title=f"quiver gateway: {self.manifest.agent_name}",
            instructions=self.manifest.instructions(),
            lifespan=self._lifespan,
            get_tool_input_schema=self._input_schema_of,
            on_list_tools=self._on_list_tools,
            on_subscriptions_listen=self._on_listen,
        )
        # Registered directly: the handler returns the upstream's wire result as a dict, not a model.
        server.add_request_handler("tools/call", types.CallToolRequestParams, self._on_call_tool)
        telemetry_mcp.install(server.middleware, lambda name: bool(self._meta_tools) and name in META_TOOL_NAMES)
        server.middleware.append(input_required.request_state_boundary())  # seals approval rounds' state (2026)
        return server

    @asynccontextmanager
    async def _lifespan(self, _server: Server[GatewayScope]) -> AsyncIterator[GatewayScope]:
        bus = InMemorySubscriptionBus()
        scope = GatewayScope(SessionScope(), bus, ListenHandler(bus))
        try:
            yield scope
        finally:
            scope.listen.close()
            for session_id in sorted(self._started):
                self.recorder.session_ended(session_id)
            self._started.clear()
            for session in scope.sessions.sessions():
                if session.stats.calls or session.stats.refused or session.stats.discovery_steps:
                    logger.info("session %s: %s", session.id[:12], session.stats.summary())

    # ----------------------------------------------------------------- handlers

    async def _on_listen(
        self, ctx: ServerRequestContext[GatewayScope, Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        return await ctx.lifespan_context.listen(ctx, params)

    async def _on_list_tools(
        self, ctx: ServerRequestContext[GatewayScope, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=self.exposed_tools(self._session(ctx)))

    async def _on_call_tool(
        self, ctx: ServerRequestContext[GatewayScope, Any], params: types.CallToolRequestParams
    ) -> HandlerResult:
        session = self._session(ctx)
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        round_ = input_required.round_for(ctx, params) if modern else None
        token = input_required.bind(round_)
        try:
            result = await self._call(ctx, session, params.name, dict(params.arguments or {}))
        except LedgerOutage as outage:
            raise self._outage(params.name, outage) from None
        except Exception:
            result = _internal_error(params.name)
        finally:
            input_required.unbind(token)
        if round_ is not None:  # an approval to ask for becomes an input_required result (2026-07-28)
            result = round_.result(result)
        if modern and "resultType" not in result:
            result = {**result, "resultType": "complete"}
        return result

    # ----------------------------------------------------------------- exposure

    def exposed_tools(self, session: GatewaySession) -> list[types.Tool]:
        """tools/list for `session`: preloaded, then the meta-tools, then the tools it loaded."""
        tools = [self._tools[t.exposed] for t in self.manifest.preloaded]
        tools += self._meta_tools
        tools += [self._tools[name] for name in session.loaded]
        return tools

    def _input_schema_of(self, name: str) -> Mapping[str, Any] | None:
        tool = self.manifest.by_exposed.get(name)
        if tool is not None:
            return tool.input_schema
        schema = self._meta_schemas.get(name) if self._meta_tools else None
        return schema if isinstance(schema, Mapping) else None

    def _session(self, ctx: ServerRequestContext[GatewayScope, Any]) -> GatewaySession:
        key = None
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            headers = getattr(ctx.request, "headers", None)
            if headers is not None:
                key = headers.get(_SESSION_HEADER)
        return self._session_of(ctx.lifespan_context, key)

    def _session_of(self, scope: GatewayScope, key: str | None) -> GatewaySession:
        session = scope.sessions.get(key)
        if session.id not in self._started:
            self._started.add(session.id)
            self.recorder.session_started(
                session.id,
                self.manifest.agent_id,
                self.manifest.initial_tokens,
                preloaded_tools=len(self.manifest.preloaded),
            )
        return session

    # ----------------------------------------------------------------- stdio calls beside the SDK

    def direct_call_ok(self, name: str) -> bool:
        """Whether a handshake-era stdio tools/call of `name` may be answered beside the SDK's dispatcher
        (`_stdio_calls`): a tool of the manifest, not a meta-tool (those notify and load tools); no tracer
        provider (the SDK's middleware and our span need the request context then); and a policy that
        never asks for approval (eliciting one needs the SDK's session), nor can come to under the flow guard
        (`[flows] enforce`: a tool that can send data out or destroy things)."""
        if (self._meta_tools and name in META_TOOL_NAMES) or tracing_configured():
            return False
        tool = self.manifest.by_exposed.get(name)
        if tool is None or (self.manifest.flows_enforce and {"exfiltration", "destructive"} & set(tool.capabilities)):
            return False
        _, checked = checked_policy(tool.policy)
        return isinstance(checked, ExecPolicy) and not checked.needs_approval

    async def direct_call(
        self, scope: GatewayScope, name: str, args: dict[str, JSON], request_id: str | int, meta: dict[str, Any] | None
    ) -> dict[str, JSON]:
        """`_on_call_tool` for a call `direct_call_ok` accepted: the same checks, executor and result."""
        session = self._session_of(scope, None)  # a stdio connection is one session, as `_session` finds it
        try:
            return await self._invoke(
                _DirectRequest(request_id, meta), session, self.manifest.by_exposed[name], args, None
            )
        except LedgerOutage as outage:
            raise self._outage(name, outage) from None
        except Exception:
            return _internal_error(name)

    async def _tools_changed(self, ctx: ServerRequestContext[GatewayScope, Any], added: list[str]) -> None:
        logger.info("session tools joined the exposed list: %s", ", ".join(added))
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            await ctx.lifespan_context.bus.publish(ToolsListChanged())
        else:
            await ctx.session.send_notification(types.ToolListChangedNotification(), related_request_id=ctx.request_id)

    # ----------------------------------------------------------------- calls

    async def _call(
        self, ctx: ServerRequestContext[GatewayScope, Any], session: GatewaySession, name: str, args: dict[str, JSON]
    ) -> dict[str, JSON]:
        if self._meta_tools and name in META_TOOL_NAMES:
            return await self._meta(ctx, session, name, args)
        tool = self.manifest.by_exposed.get(name)
        if tool is None:
            known = [*self.manifest.by_exposed, *(META_TOOL_NAMES if self._meta_tools else ())]
            reason = _unsnapshotted(self.manifest, name.split("__", 1)[0], name)
            reason = reason or f"`{name}` is not a tool of agent `{self.manifest.agent_id}`"
            return self._refuse(session, name, reason, known, call_id=_request_id(ctx))
        return await self._invoke(ctx, session, tool, args, None)

    def _refuse(
        self,
        session: GatewaySession,
        target: str,
        reason: str,
        known: list[str] | None = None,
        *,
        call_id: str | None = None,
    ) -> dict[str, JSON]:
        session.stats.refused += 1
        logger.warning("refused `%s` (session %s): %s", target, session.id[:12], reason)
        server, _, tool = target.rpartition("/")
        self.recorder.call(session.id, server, tool, outcome="refused", preloaded=False)  # each refusal counts
        span_server, span_tool = requested_tool(target)
        rejected_call_span(server=span_server, tool=span_tool, error_type="refused", message=reason, call_id=call_id)
        hint = did_you_mean(target, known, "") if known else ""
        rule = "only the agent's resolved tools (its manifest) are callable"
        return _error(f"refused: {reason}; {rule}.{' ' + hint if hint else ''}")

    async def _invoke(
        self,
        ctx: ServerRequestContext[GatewayScope, Any] | _DirectRequest,
        session: GatewaySession,
        tool: ManifestTool,
        args: dict[str, JSON],
        idempotency_key: str | None,
    ) -> dict[str, JSON]:
        session.stats.calls += 1
        idempotency_key = idempotency_key or _resumed_key()
        preloaded = tool.load == "preloaded"
        problem = await self._validate(tool.exposed, tool.input_schema, args)
        if problem is not None:
            session.stats.invalid_arguments += 1
            self.recorder.call(session.id, tool.server, tool.name, outcome="validation_failed", preloaded=preloaded)
            logger.info("invalid arguments for `%s` (session %s): %s", tool.exposed, session.id[:12], problem)
            rejected_tool_span(tool, error_type="invalid_arguments", message=problem, call_id=_request_id(ctx))
            return _error(f"invalid arguments for `{tool.exposed}` (nothing was sent to `{tool.server}`): {problem}")
        try:
            check = await self.upstreams.check_pin(tool.server, tool.name, tool.sha256)
        except UpstreamError as exc:
            logger.warning("cannot call `%s`: %s", tool.exposed, exc)
            rejected_tool_span(tool, error_type="upstream_unavailable", message=str(exc), call_id=_request_id(ctx))
            self.recorder.call(session.id, tool.server, tool.name, outcome="error", preloaded=preloaded)
            return _error(f"`{tool.server}` is unavailable: {exc}")
        if not check.matches:
            session.stats.schema_mismatches += 1
            self.recorder.call(session.id, tool.server, tool.name, outcome="refused", preloaded=preloaded)
            text = self._mismatch(tool, check)
            logger.warning("refused `%s/%s` (session %s): %s", tool.server, tool.name, session.id[:12], text)
            rejected_tool_span(tool, error_type="schema_mismatch", message=text, call_id=_request_id(ctx))
            return _error(text)
        request = CallRequest(
            server=tool.server,
            tool=tool.name,
            arguments=args,
            tool_sha256=tool.sha256,
            policy=tool.policy,
            session_id=session.id,
            idempotency_key=idempotency_key,
            call_id=_request_id(ctx),
            meta=_forward_meta(ctx.meta),
            description=tool.description,
        )
        try:
            with elicitation(_elicit_for(ctx)):
                outcome = await self.executor.execute(request, self.upstreams.dispatch)
        except UpstreamError as exc:  # an executor that lets dispatch errors through
            self.recorder.call(session.id, tool.server, tool.name, outcome="error", preloaded=preloaded)
            return _error(f"upstream failed: {exc}")
        if self._outage_calls:
            logger.warning("the ledger is available again (%d call(s) were refused meanwhile)", self._outage_calls)
            self._outage_calls = 0
        result = dict(outcome.result)
        if result.get("isError"):
            self.recorder.call(session.id, tool.server, tool.name, outcome="error", preloaded=preloaded)
        else:
            self.recorder.call(session.id, tool.server, tool.name, outcome="ok", preloaded=preloaded)
        if not result.get("isError"):
            session.stats.record_success()
        return result

    def _outage(self, name: str, outage: LedgerOutage) -> MCPError:
        """The JSON-RPC error for a call the ledger could not record; logged once per outage, not per call."""
        if not self._outage_calls:
            logger.warning(
                "ledger unavailable: %s; tool calls are answered with error %d (retryable, nothing sent) until it "
                "recovers", outage.message, LEDGER_UNAVAILABLE,
            )  # fmt: skip
        self._outage_calls += 1
        return ledger_unavailable_error(name, outage)

    def _mismatch(self, tool: ManifestTool, check: PinCheck) -> str:
        head = (
            f"schema mismatch: `{tool.server}/{tool.name}` is no longer what the manifest pinned, so it was not called"
        )
        if check.current is None:
            what = f"the server no longer serves `{tool.name}`"
        else:
            what = "; ".join(describe_changes(dict(tool.definition), dict(check.current)))
            what += f" (pinned sha256 {tool.sha256[:12]}, upstream {str(check.current_sha256)[:12]})"
        return f"{head}: {what}. Review the change with `quiver snapshot --check`, re-snapshot and recompile."

    async def _validate(self, key: str, schema: Mapping[str, JSON], args: Mapping[str, JSON]) -> str | None:
        """Why `args` break the tool's pinned inputSchema, or None. Patterns are matched by `regex_budget`: in
        linear time on the event loop where RE2 can, else by `re` in a worker process, waited for off the
        loop and bounded by PATTERN_BUDGET_S for the whole call (other clients are answered meanwhile)."""
        validator = self._validators.get(key)
        if validator is None:
            cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
            try:
                cls.check_schema(schema)
            except jsonschema.SchemaError as exc:
                return f"the pinned inputSchema is not a valid JSON Schema ({exc.message})"
            validator = self._validators[key] = (bounded_validator(schema, cls), cls.__name__)
        try:
            with linear_only():
                return _problem(validator, schema, args)
        except NeedsBacktracking:
            pass
        try:
            return await anyio.to_thread.run_sync(partial(_budgeted_problem, validator, schema, args))
        except PatternTimeout as exc:
            return f"{exc}; the argument was not checked"


def _problem(checker: tuple[Any, str], schema: Mapping[str, JSON], args: Mapping[str, JSON]) -> str | None:
    validator, dialect = checker
    if instance_valid(dialect, schema, args):
        return None  # the common arguments, vouched for without jsonschema's walk (30-40 us a call)
    error = jsonschema.exceptions.best_match(validator.iter_errors(args))
    if error is None:
        return None
    path = "/".join(str(p) for p in error.absolute_path)
    return f"{error.message}{f' (at `{path}`)' if path else ''}"


def _budgeted_problem(validator: tuple[Any, str], schema: Mapping[str, JSON], args: Mapping[str, JSON]) -> str | None:
    with budget(pattern_budget_s()):
        return _problem(validator, schema, args)


def pattern_budget_s() -> float:
    """Seconds one call's argument patterns may take in `re`: QUIVER_PATTERN_BUDGET_S, else the default."""

    try:
        value = float(os.environ.get("QUIVER_PATTERN_BUDGET_S", PATTERN_BUDGET_S))
    except ValueError:
        return PATTERN_BUDGET_S
    return value if value > 0 else PATTERN_BUDGET_S


def _request_id(ctx: ServerRequestContext[GatewayScope, Any] | _DirectRequest) -> str | None:
    """The JSON-RPC id of the call (`jsonrpc.request.id` on its span; `call_id` in the ledger)."""
    return str(ctx.request_id) if ctx.request_id is not None else None


def _resumed_key() -> str | None:
    """The idempotency key a retried 2026-07-28 call's request state names (its approval round)."""
    round_ = input_required.current_round()
    return round_.key if round_ is not None else None


def _internal_error(name: str) -> dict[str, JSON]:
    """The answer to a call whose handling raised (logged with its traceback): never a crash."""
    logger.exception("internal error while handling a call of `%s`", name)
    return _error(f"quiver gateway: internal error while handling `{name}`; see the gateway log")


class _DirectRequest(NamedTuple):
    """What `_invoke` reads of a request context, for a call answered beside the SDK (no session: it
    cannot elicit, so `direct_call_ok` only takes tools that never ask for approval)."""

    request_id: str | int
    meta: dict[str, Any] | None
    session: None = None


def _elicit_for(ctx: ServerRequestContext[GatewayScope, Any] | _DirectRequest) -> Any:
    """How to ask this caller for an approval: MCP elicitation when its client declared support for it
    (handshake-era sessions), the call's input_required round on a 2026-07-28 connection whose client can be
    asked (`quiver.runtime.input_required`); None otherwise, and the action then waits for `quiver ledger
    approve`."""
    round_ = input_required.current_round()
    if round_ is not None:
        return round_.elicit
    session = getattr(ctx, "session", None)
    params = getattr(session, "client_params", None)
    capabilities = getattr(params, "capabilities", None)
    if session is None or getattr(capabilities, "elicitation", None) is None:
        return None
    elicit_form = getattr(session, "elicit_form", None)
    if elicit_form is None:
        return None
    return partial(elicit_form, related_request_id=ctx.request_id)


def with_always_load(definition: Mapping[str, Any]) -> dict[str, Any]:
    """A tool the gateway lists, marked for hosts that would defer it: Claude Code defers every MCP tool
    unless it sets `_meta["anthropic/alwaysLoad"]` (measured on 2.1.332), and the gateway lists only what it
    means the model to have up front (its direct tools, its meta-tools, and what the session loaded)."""
    meta = definition.get("_meta")
    merged = {**(meta if isinstance(meta, dict) else {}), ALWAYS_LOAD_META: True}
    return {**definition, "_meta": merged}


def _tool_object(tool: ManifestTool) -> types.Tool:
    try:
        return types.Tool.model_validate(with_always_load(tool.exposed_definition()))
    except ValidationError as exc:
        raise InputError(
            f"the manifest's definition of `{tool.server}/{tool.name}` is not an MCP Tool: {exc.errors()[0]['msg']}",
            hint="re-snapshot the server and recompile",
        ) from None


def _forward_meta(meta: Mapping[str, Any] | None) -> dict[str, JSON]:
    """The client's `_meta` minus what belongs to its own hop (progress, the 2026 envelope)."""
    if not meta:
        return {}
    return {k: v for k, v in meta.items() if k not in _DROPPED_META and not k.startswith("io.modelcontextprotocol/")}
