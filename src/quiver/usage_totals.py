"""Usage records (`quiver stats`): per session (`SessionStats`, with its `FirstUse`s and `SessionTool`s), as
`quiver.stats.summarize` builds them, and their totals per agent (`AgentStats`) and per (agent, tool)
(`ToolStats`). Pure."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class FirstUse:
    """The first call of `tool` in a session, and the discovery that led to it."""

    tool: str  # "server/tool"
    preloaded: bool
    steps: int
    discovery_tokens: int
    seconds: float  # since the session start


@dataclass(frozen=True, slots=True)
class SessionTool:
    """What one session did with one tool."""

    tool: str
    calls: int = 0  # not counting refused calls
    errors: int = 0
    validation_failures: int = 0
    refusals: int = 0
    loaded_tokens: int | None = None  # schema tokens, when the session loaded it


@dataclass(frozen=True, slots=True)
class SessionStats:
    agent: str
    session: str
    started: float
    ended: float | None
    initial_tokens: int
    preloaded_tools: int
    tokens_before_first_call: int
    loaded_tokens: int
    discovery_tokens: int
    discovery_steps: int
    trailing_steps: int
    first_uses: tuple[FirstUse, ...]
    calls: int  # not counting refused calls
    errors: int
    validation_failures: int
    refusals: int
    seconds_to_first_success: float | None
    preloaded_used: tuple[str, ...]
    deferred_used: tuple[str, ...]
    loaded_used: tuple[str, ...]
    loaded_unused: tuple[str, ...]
    tools: tuple[SessionTool, ...]  # sorted by tool

    @property
    def tokens(self) -> int:
        """The session's tool-definition cost: initial + loaded schemas + discovery responses."""
        return self.initial_tokens + self.loaded_tokens + self.discovery_tokens


@dataclass(frozen=True, slots=True)
class ToolStats:
    """One tool of one agent over that agent's sessions."""

    agent: str
    tool: str
    sessions: int  # the agent's sessions
    sessions_used: int
    calls: int
    errors: int
    validation_failures: int
    refusals: int
    first_uses_deferred: int
    steps_deferred: int
    discovery_tokens_deferred: int
    first_uses_preloaded: int
    steps_preloaded: int
    discovery_tokens_preloaded: int
    sessions_loaded: int
    sessions_loaded_unused: int
    schema_tokens: int | None  # as recorded when it was loaded

    @property
    def share(self) -> float:
        """Share of the agent's sessions that used the tool."""
        return self.sessions_used / self.sessions if self.sessions else 0.0

    @property
    def mean_steps_before_first_use(self) -> float | None:
        uses = self.first_uses_deferred + self.first_uses_preloaded
        return (self.steps_deferred + self.steps_preloaded) / uses if uses else None


@dataclass(frozen=True, slots=True)
class AgentStats:
    agent: str
    sessions: int
    initial_tokens: int  # totals over the sessions
    tokens: int
    tokens_before_first_call: int
    discovery_steps: int
    trailing_steps: int
    calls: int
    errors: int
    validation_failures: int
    refusals: int
    sessions_with_success: int
    seconds_to_first_success: float  # total over sessions_with_success
    preloaded_tools: int
    preloaded_used: int
    deferred_used: int
    loaded_used: int
    loaded_unused: int

    @property
    def tokens_per_session(self) -> float:
        return self.tokens / self.sessions if self.sessions else 0.0

    @property
    def discovery_steps_per_session(self) -> float:
        return self.discovery_steps / self.sessions if self.sessions else 0.0

    @property
    def mean_seconds_to_first_success(self) -> float | None:
        return self.seconds_to_first_success / self.sessions_with_success if self.sessions_with_success else None

    @property
    def preloaded_used_share(self) -> float | None:
        """Share of the preloaded tools a session used, over all sessions."""
        return self.preloaded_used / self.preloaded_tools if self.preloaded_tools else None


def agent_totals(sessions: tuple[SessionStats, ...]) -> tuple[AgentStats, ...]:
    out = []
    for agent in sorted({s.agent for s in sessions}):
        mine = [s for s in sessions if s.agent == agent]
        success = [s.seconds_to_first_success for s in mine if s.seconds_to_first_success is not None]
        out.append(
            AgentStats(
                agent=agent,
                sessions=len(mine),
                initial_tokens=sum(s.initial_tokens for s in mine),
                tokens=sum(s.tokens for s in mine),
                tokens_before_first_call=sum(s.tokens_before_first_call for s in mine),
                discovery_steps=sum(s.discovery_steps for s in mine),
                trailing_steps=sum(s.trailing_steps for s in mine),
                calls=sum(s.calls for s in mine),
                errors=sum(s.errors for s in mine),
                validation_failures=sum(s.validation_failures for s in mine),
                refusals=sum(s.refusals for s in mine),
                sessions_with_success=len(success),
                seconds_to_first_success=sum(success),
                preloaded_tools=sum(s.preloaded_tools for s in mine),
                preloaded_used=sum(len(s.preloaded_used) for s in mine),
                deferred_used=sum(len(s.deferred_used) for s in mine),
                loaded_used=sum(len(s.loaded_used) for s in mine),
                loaded_unused=sum(len(s.loaded_unused) for s in mine),
            )
        )
    return tuple(out)


def tool_totals(sessions: tuple[SessionStats, ...]) -> tuple[ToolStats, ...]:
    counts: dict[str, int] = {}
    per: dict[tuple[str, str], list[int]] = {}
    schema: dict[tuple[str, str], int] = {}
    # per tool: used, calls, errors, invalid, refused, then first uses deferred n/steps/tokens and preloaded
    # n/steps/tokens, then sessions loaded, loaded and unused
    for s in sessions:
        counts[s.agent] = counts.get(s.agent, 0) + 1
        for item in s.tools:
            row = per.setdefault((s.agent, item.tool), [0] * 13)
            row[1] += item.calls
            row[2] += item.errors
            row[3] += item.validation_failures
            row[4] += item.refusals
            if item.loaded_tokens is not None:
                schema[(s.agent, item.tool)] = item.loaded_tokens
                row[11] += 1
                row[12] += item.tool in s.loaded_unused
        for use in s.first_uses:
            row = per[(s.agent, use.tool)]
            row[0] += 1
            base = 8 if use.preloaded else 5
            row[base] += 1
            row[base + 1] += use.steps
            row[base + 2] += use.discovery_tokens
    return tuple(
        ToolStats(
            agent=agent,
            tool=tool,
            sessions=counts[agent],
            sessions_used=row[0],
            calls=row[1],
            errors=row[2],
            validation_failures=row[3],
            refusals=row[4],
            first_uses_deferred=row[5],
            steps_deferred=row[6],
            discovery_tokens_deferred=row[7],
            first_uses_preloaded=row[8],
            steps_preloaded=row[9],
            discovery_tokens_preloaded=row[10],
            sessions_loaded=row[11],
            sessions_loaded_unused=row[12],
            schema_tokens=schema.get((agent, tool)),
        )
        for (agent, tool), row in sorted(per.items())
    )
