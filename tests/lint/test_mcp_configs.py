"""The mcp-configs rule family: per-rule fixtures, the registry audit, and the secret heuristics."""

from __future__ import annotations

from pathlib import Path

import pytest

from quiver.lint.mcp import server_not_snapshotted, unserved_tool_entries
from quiver.lint.registry import rules_of
from quiver.lint.run import run
from quiver.lint.support.secrets import secret_kind, url_secret
from quiver.model import Dialect
from quiver.sources.mcp_config import Reader, reader_of

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lint"
# MCP011-013 come from resolution data (test_resolve.py and the catalog harness cover them).
RULES = tuple(r for r in rules_of("MCP") if r not in (*server_not_snapshotted.RULES, *unserved_tool_entries.RULES))
CODES = sorted(rule.code for rule in RULES)


# Docs and the bad/good fixtures of these rules are the rule harness's (tests/findings/test_rules.py).


def test_mcp_rule_codes_and_names_are_unique_and_none_is_fixable() -> None:
    assert len({r.code for r in RULES}) == len(RULES)
    assert len({r.name for r in RULES}) == len(RULES)
    assert not any(r.fixable for r in RULES)


def test_findings_never_repeat_the_secret_they_report() -> None:
    for finding in run(FIXTURES / "MCP005" / "bad", select=["MCP005"]).findings:
        assert "ghp_" not in finding.message and "sk-proj" not in finding.message
        assert "AKIA" not in finding.message and "AKIA" not in (finding.hint or "")


@pytest.mark.parametrize(
    ("path", "dialect", "host"),
    [
        (".vscode/mcp.json", "vscode", "vscode"),
        (".mcp.json", "mcpServers", "shared"),
        (".github/mcp.json", "mcpServers", "copilot"),
        ("mcp-config.json", "mcpServers", "copilot"),
        (".copilot/mcp-config.json", "mcpServers", "copilot"),
        ("tools/servers.json", "mcpServers", "other"),
        (".mcp.json", "list", "quiver"),
        (".github/agents/a.agent.md", "agent", "agent"),
    ],
)
def test_each_config_file_is_read_by_the_documented_host(path: str, dialect: str, host: str) -> None:
    assert reader_of(path, Dialect(dialect)) == Reader(host)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("GITHUB_TOKEN", "ghp_Zq8Xr2Lm5Nb7Vc1Kd4Hs9Tw3Py6Gf0Ja2Ue8"),
        ("Authorization", "Bearer Zq8Xr2Lm5Nb7Vc1K"),
        ("Authorization", "token Zq8Xr2Lm5Nb7Vc1K"),
        ("SLACK", "xoxb-1234567890-abcdefghij"),
        ("ANTHROPIC_API_KEY", "sk-ant-api03-Zq8Xr2Lm5Nb7Vc1Kd4Hs9"),
        ("AWS_ACCESS_KEY_ID", "AKIAZ7Q2M4N8P3R5T6W1"),
        ("DB_PASSWORD", "Tr0ub4dor-and-3"),
        ("CONFIG", "Zq8Xr2Lm5Nb7Vc1Kd4Hs9Tw3Py6Gf0Ja2Ue8Wx"),
        ("URL", "prefix ghp_Zq8Xr2Lm5Nb7Vc1Kd4Hs9Tw3Py6Gf0Ja2Ue8 ${SUFFIX}"),
    ],
)
def test_literal_credentials_are_recognised(name: str, value: str) -> None:
    assert secret_kind(name, value) is not None


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("GITHUB_TOKEN", "${GITHUB_TOKEN}"),
        ("GITHUB_TOKEN", "$GITHUB_TOKEN"),
        ("Authorization", "Bearer ${input:token}"),
        ("Authorization", "Bearer ${{ secrets.COPILOT_MCP_TOKEN }}"),
        ("Authorization", "Bearer <your-token>"),
        ("API_KEY", "YOUR_API_KEY"),
        ("API_KEY", "COPILOT_MCP_API_KEY"),
        ("API_KEY", "sk-xxxxxxxxxxxxxxxxxxxxxxxx"),
        ("AWS_ACCESS_KEY_ID", "AKIAIOSFODNN7EXAMPLE"),
        ("TOKEN_FILE", "/run/secrets/github-token"),
        ("AUTH_MODE", "client-credentials"),
        ("SESSION_TIMEOUT", "360000000000000"),
        ("Content-Type", "application/json"),
        ("IMAGE", "ghcr.io/example/server@sha256:0123abcd"),
        ("COMMIT", "0123456789abcdef0123456789abcdef01234567"),
    ],
)
def test_references_placeholders_and_ordinary_values_are_not_secrets(name: str, value: str) -> None:
    assert secret_kind(name, value) is None


def test_credentials_in_urls_are_recognised_and_references_are_not() -> None:
    assert url_secret("https://user:Zq8Xr2Lm5N@example.com/mcp") == "password in the URL"
    assert url_secret("https://example.com/mcp?token=Zq8Xr2Lm5Nb7") == "`token` query parameter"
    assert url_secret("https://user:${PASSWORD}@example.com/mcp") is None
    assert url_secret("https://example.com/mcp?api_key=${KEY}&page=2") is None
    assert url_secret("https://example.com/mcp?page=12345678") is None
