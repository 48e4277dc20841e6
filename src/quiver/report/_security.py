"""Security metadata for code scanning: which rules are security rules and how severe (CVSS-like, 0-10).

GitHub ranks alerts of rules tagged `security` by `properties.security-severity` (a string: over 9.0
critical, 7.0-8.9 high, 4.0-6.9 medium, 0.1-3.9 low). Keyed by rule code, kept beside the SARIF formatter
until rule declarations carry it themselves.
"""

from __future__ import annotations

from collections.abc import Mapping

SECURITY_SEVERITY: Mapping[str, str] = {
    "SEC001": "8.0",  # hidden instruction markup in a tool description (tool poisoning)
    "SEC002": "8.0",  # instruction override ("ignore previous instructions")
    "SEC003": "8.5",  # a description asks for credentials
    "SEC004": "7.5",  # cross-tool instruction (one tool steering calls to another)
    "SEC005": "8.0",  # exfiltration URL in a description
    "SEC006": "7.0",  # invisible Unicode that hides text from reviewers
    "SEC007": "5.0",  # a tool name shadowing another server's tool
    "CTR094": "8.0",  # a change that brings hostile text into a tool (a rug pull; the SEC001-006 patterns)
    "MCP005": "8.8",  # a literal secret committed in an MCP config
    "MCP009": "5.3",  # plain-http (unencrypted) remote server URL
    "MCP010": "7.5",  # a download piped to a shell as the server command
}


def security_severity(code: str) -> str | None:
    """The `security-severity` of a security rule; None for every other rule."""
    return SECURITY_SEVERITY.get(code)
