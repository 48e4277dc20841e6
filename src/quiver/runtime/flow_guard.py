"""The gateway's flow guard (issue 28, `[flows] enforce = true`): once a session has called a tool that brings
in untrusted input, every call of a tool that can send data out (or destroy something) waits for a
human's approval.

A `PolicyHook` of the executor (`LedgerExecutor(..., hook=...)`, `DirectExecutor(hook=...)`): `before` sees
each call with its session and tool and may raise the call's approval to `always`, with the reason in the
policy's `approval_reason` (the approval prompt shows it, and the ledger keeps it with the action);
`after` marks the session once an untrusted-input tool has answered. The labels are the manifest's
(`capabilities` of each tool entry, overrides applied at compile time). A session's mark lives as long
as the gateway process: a restarted gateway starts every session clean, as its sessions are new.

Sessions are the gateway's (`quiver.runtime.session`): one per stdio process, per `Mcp-Session-Id`, or one
shared by every 2026-07-28 HTTP client of the gateway. Only MCP tools pass through the gateway; a built-in
of the host (its shell, its web fetch) is the host's to confirm.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace

from quiver.runtime._manifest import Manifest
from quiver.runtime.protocol import APPROVAL_REASON_KEY, CallOutcome, CallRequest

logger = logging.getLogger(__name__)

SOURCE = "untrusted_input"
SINKS = {"exfiltration": "can send data out", "destructive": "can destroy things"}  # first match names the why
# Outcomes after which the tool's answer (or part of it) may have reached the model.
_ANSWERED = frozenset({"succeeded", "failed_final", "unknown_outcome", "failed_retryable"})


class FlowGuard:
    """Raise a sink's approval once its session has read untrusted input; see the module docstring."""

    def __init__(self, manifest: Manifest) -> None:
        self._labels: Mapping[tuple[str, str], frozenset[str]] = {
            (t.server, t.name): frozenset(t.capabilities) for t in manifest.tools
        }
        self._sources: dict[str, str] = {}  # session id -> the first untrusted-input tool it called

    def source_of(self, session_id: str) -> str | None:
        """The untrusted-input tool that marked the session, if any."""
        return self._sources.get(session_id)

    def sink(self, server: str, tool: str) -> str | None:
        """What makes the tool a sink ("can send data out"), or None."""
        labels = self._labels.get((server, tool), frozenset())
        return next((what for label, what in SINKS.items() if label in labels), None)

    def before(self, request: CallRequest) -> CallRequest:
        source = self._sources.get(request.session_id)
        what = self.sink(request.server, request.tool) if source is not None else None
        if what is None:
            return request
        reason = (
            f"this session read untrusted input through `{source}`, and `{request.server}/{request.tool}` {what} "
            "([flows] enforce)"
        )
        logger.info("flow guard: `%s/%s` needs approval: %s", request.server, request.tool, reason)
        return replace(request, policy={**request.policy, "approval": "always", APPROVAL_REASON_KEY: reason})

    def after(self, request: CallRequest, outcome: CallOutcome) -> None:
        if SOURCE not in self._labels.get((request.server, request.tool), frozenset()):
            return
        if outcome.state in _ANSWERED and request.session_id not in self._sources:
            self._sources[request.session_id] = f"{request.server}/{request.tool}"
            logger.info("flow guard: session %s read untrusted input (`%s/%s`)", request.session_id[:12],
                        request.server, request.tool)  # fmt: skip
