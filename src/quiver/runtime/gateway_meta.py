"""The gateway's meta-tools (search_tools, list_servers, list_tools, describe_tool, call_tool): the
handlers `Gateway` inherits from `_MetaTools` (see `quiver.runtime.gateway`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mcp.server import ServerRequestContext

from quiver.model import JSON
from quiver.runtime._manifest import Manifest, ManifestTool, one_line
from quiver.runtime.gateway_index import SearchSetup, gateway_index
from quiver.runtime.gateway_results import _error, _json_result, _unsnapshotted
from quiver.runtime.gateway_scope import GatewayScope
from quiver.runtime.session import GatewaySession
from quiver.runtime.usage import LoadVia, Recorder
from quiver.suggest import did_you_mean

DEFAULT_SEARCH_LIMIT = 5


class _MetaTools:
    """The meta-tool handlers of `Gateway`, its one subclass, which sets these attributes and methods."""

    manifest: Manifest
    recorder: Recorder
    _search_setup: SearchSetup
    _meta_schemas: dict[str, JSON]
    _index: Any

    if TYPE_CHECKING:  # defined by Gateway

        async def _validate(self, key: str, schema: Mapping[str, JSON], args: Mapping[str, JSON]) -> str | None: ...

        def _refuse(
            self, session: GatewaySession, target: str, reason: str, known: list[str] | None = None
        ) -> dict[str, JSON]: ...

        async def _invoke(
            self,
            ctx: ServerRequestContext[GatewayScope, Any],
            session: GatewaySession,
            tool: ManifestTool,
            args: dict[str, JSON],
            idempotency_key: str | None,
        ) -> dict[str, JSON]: ...

        async def _tools_changed(self, ctx: ServerRequestContext[GatewayScope, Any], added: list[str]) -> None: ...

    async def _meta(
        self, ctx: ServerRequestContext[GatewayScope, Any], session: GatewaySession, name: str, args: dict[str, JSON]
    ) -> dict[str, JSON]:
        problem = await self._validate(name, self._meta_schemas[name], args)
        if problem is not None:
            session.stats.invalid_arguments += 1
            return _error(f"invalid arguments for `{name}`: {problem}")
        if name == "call_tool":
            found = self._target(session, name, args)
            if isinstance(found, dict):
                return found
            await self._load(ctx, session, [found], via="call")
            arguments = args.get("arguments") or {}
            key = args.get("idempotency_key")
            return await self._invoke(ctx, session, found, dict(arguments), str(key) if key is not None else None)
        session.stats.discovery_steps += 1
        if name == "search_tools":
            self.recorder.discovery(session.id, "search")
        elif name in ("list_servers", "list_tools"):
            self.recorder.discovery(session.id, "list_servers" if name == "list_servers" else "list_tools")
        if name == "search_tools":
            return await self._search(ctx, session, str(args["query"]), int(args.get("limit", DEFAULT_SEARCH_LIMIT)))
        if name == "list_servers":
            servers = [
                {"name": s.name, "description": s.description, "tools": len(self.manifest.server_tools(s.name))}
                for s in self.manifest.servers.values()
                if self.manifest.server_tools(s.name)
            ]
            return _json_result({"servers": servers})
        if name == "list_tools":
            server = str(args["server"])
            tools = self.manifest.server_tools(server)
            if not tools:
                return self._unknown_server(server)
            listed = [{"tool": t.name, "description": one_line(t.description)} for t in tools]
            return _json_result({"server": server, "tools": listed})
        # describe_tool
        found = self._target(session, name, args)
        if isinstance(found, dict):
            self.recorder.discovery(session.id, "describe")
            return found
        self.recorder.discovery(session.id, "describe", tokens=found.tokens)
        await self._load(ctx, session, [found], via="describe")
        described: dict[str, JSON] = {
            "name": found.exposed,
            "server": found.server,
            "tool": found.name,
            "description": found.description,
            "inputSchema": found.input_schema,
        }
        for key in ("outputSchema", "annotations"):
            if key in found.definition:
                described[key] = found.definition[key]
        return _json_result(described)

    async def _search(
        self, ctx: ServerRequestContext[GatewayScope, Any], session: GatewaySession, query: str, limit: int
    ) -> dict[str, JSON]:
        """The best tools for `query`. They do not join the session's tool list: a model reads a list of
        candidates and picks one, which joins when it is described or called (`describe_tool`, `call_tool`)."""
        hits = self._search_index().search(query, limit)
        found = [self.manifest.by_key[(h.server, h.tool)] for h in hits if (h.server, h.tool) in self.manifest.by_key]
        tools = [
            {"name": t.exposed, "server": t.server, "tool": t.name, "description": one_line(t.description)}
            for t in found
        ]
        payload: dict[str, JSON] = {"tools": tools}
        if not tools:
            payload["hint"] = "no tool matched; try other words, or list_servers and list_tools"
        return _json_result(payload)

    def _search_index(self) -> Any:
        if self._index is None:
            self._index = gateway_index(self.manifest, self._search_setup)
        return self._index

    async def _load(
        self,
        ctx: ServerRequestContext[GatewayScope, Any],
        session: GatewaySession,
        tools: list[ManifestTool],
        *,
        via: LoadVia,
    ) -> None:
        added = session.load(t.exposed for t in tools if t.load != "preloaded")
        for name in added:
            t = self.manifest.by_exposed[name]
            self.recorder.tool_loaded(session.id, t.server, t.name, via=via, tokens=t.tokens)
        if added:
            await self._tools_changed(ctx, added)

    def _target(self, session: GatewaySession, meta: str, args: Mapping[str, JSON]) -> ManifestTool | dict[str, JSON]:
        """The tool `describe_tool`/`call_tool` names: by `name` (as search_tools returned it, or the tool's
        `server/tool`), else by `server` and `tool`."""
        name = args.get("name")
        if name is None:
            if "server" not in args or "tool" not in args:
                session.stats.invalid_arguments += 1
                return _error(
                    f"invalid arguments for `{meta}`: give `name` (as search_tools returned it) or `server` and `tool`"
                )
            return self._lookup(session, str(args["server"]), str(args["tool"]))
        wanted = str(name)
        found = self.manifest.by_exposed.get(wanted)
        if found is None and "/" in wanted:
            found = self.manifest.by_key.get(tuple(wanted.split("/", 1)))  # type: ignore[arg-type]
        if found is not None:
            if ("server" in args and args["server"] != found.server) or ("tool" in args and args["tool"] != found.name):
                session.stats.invalid_arguments += 1
                given = f"{args.get('server', found.server)}/{args.get('tool', found.name)}"
                return _error(
                    f"invalid arguments for `{meta}`: `name` {wanted} is {found.server}/{found.name}, not {given}"
                )
            return found
        return self._refuse(
            session,
            wanted,
            f"`{wanted}` is not a tool of agent `{self.manifest.agent_id}`",
            list(self.manifest.by_exposed),
        )

    def _lookup(self, session: GatewaySession, server: str, tool: str) -> ManifestTool | dict[str, JSON]:
        found = self.manifest.by_key.get((server, tool))
        if found is not None:
            return found
        if not self.manifest.server_tools(server):
            servers = sorted({t.server for t in self.manifest.tools})
            reason = _unsnapshotted(self.manifest, server, f"{server}/{tool}") or (
                f"`{server}` is not a server of agent `{self.manifest.agent_id}` (servers: {', '.join(servers)})"
            )
            return self._refuse(session, f"{server}/{tool}", reason, servers if server else None)
        known = [t.name for t in self.manifest.server_tools(server)]
        return self._refuse(
            session,
            f"{server}/{tool}",
            f"`{tool}` of `{server}` is not in agent `{self.manifest.agent_id}`'s tool set",
            known,
        )

    def _unknown_server(self, server: str) -> dict[str, JSON]:
        names = sorted({t.server for t in self.manifest.tools})
        hint = did_you_mean(server, names, f"servers: {', '.join(names)}")
        return _error(f"unknown server `{server}`: {hint}")
