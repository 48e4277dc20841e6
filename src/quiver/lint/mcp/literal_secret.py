"""MCP005 literal-secret: a credential written into an MCP server entry."""

from __future__ import annotations

import re
from collections.abc import Iterator

from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.support.locate import Sources
from quiver.lint.support.mcp_entries import entries
from quiver.lint.support.server_values import ServerValues, string_values
from quiver.model import Finding
from quiver.sources.mcp_config import Reader


def _literal_secrets(v: ServerValues) -> Iterator[Finding]:
    from quiver.lint.support import secrets  # its token patterns compile on import: only with a server to check

    previous = ""
    for field, key, value in string_values(v.entry.server):
        name = "TOKEN"
        if field in ("env", "headers"):
            kind = secrets.secret_kind(key or "", value)
        elif field == "url":
            kind = secrets.url_secret(value)
        elif field == "args":
            flag, sep, rest = value.lstrip("-").partition("=")
            if sep and re.fullmatch(r"[A-Za-z_][\w-]*", flag):
                kind, name = secrets.secret_kind(flag, rest), flag
            elif previous.startswith("-") and secrets.SECRET_NAME.search(previous):
                kind, name = secrets.secret_kind(previous.lstrip("-"), value), previous.lstrip("-")
            else:
                kind = secrets.token_format(value)
            previous = value
        else:
            kind = secrets.token_format(value)
        if kind is not None:
            yield v.finding(
                LITERAL_SECRET,
                v.at(field, key, value),
                field=f"{field}.{key}" if key else field,
                kind=kind,
                advice=_secret_advice(v, name if key is None or key.lower() == "authorization" else key),
            )


def _secret_advice(v: ServerValues, key: str) -> str:
    name = re.sub(r"\W", "_", key).upper()
    host = v.entry.host
    if host == Reader.VSCODE:
        how = f'`${{input:{name.lower()}}}` (an input with `"password": true`) or `${{env:{name}}}`'
    elif host == Reader.AGENT:
        how = f"`${{{{ secrets.COPILOT_MCP_{name} }}}}` (a Copilot environment secret)"
    elif host == Reader.COPILOT:
        how = f"`$COPILOT_MCP_{name}` (cloud agent) or `${{{name}}}` (CLI)"
    else:
        how = f"`${{{name}}}`"
    return f"reference it as {how}, and revoke the exposed value"


def check(ctx: LintContext) -> Iterator[Finding]:
    src = Sources(ctx)
    for entry in entries(ctx):
        yield from _literal_secrets(ServerValues(entry, src))


LITERAL_SECRET = Rule(
    code="MCP005",
    name="literal-secret-in-config",
    severity="error",
    check=check,
    message="`{field}` of server `{server}` holds a literal {kind}",
    hint="{advice}",
    doc="""\
## What it does
Flags a credential written literally in a server's `env`, `headers`, `args`, `url` or `command`.
Values referenced through a variable are fine. Variable references are removed first; what remains
counts when it is:
- a known token format: GitHub (`ghp_`, `gho_`, `ghs_`, `github_pat_`), `sk-` keys (OpenAI,
  Anthropic), Slack (`xox?-`), AWS key ids (`AKIA`, `ASIA`), Google (`AIza`), GitLab (`glpat-`), npm,
  PyPI, Stripe, Hugging Face, JSON Web Tokens and PEM private keys;
- `Bearer`, `Basic` or `token` followed by a literal of 8+ characters;
- a random-looking literal: 12+ characters mixing cases or letters and digits under a
  secret-sounding name (`*TOKEN*`, `*KEY*`, `*SECRET*`, `*PASSWORD*`, `Authorization`, ...), or 32+
  characters mixing lower case, upper case and digits with high entropy under any name;
- a password in a URL (`https://user:pass@host`) or a credential query parameter (`?api_key=...`).

Placeholders (`<your-token>`, `YOUR_API_KEY`, `xxxx`, `changeme`) and paths or URLs are not flagged.

## Why is this bad?
Config files and agent profiles are committed: the secret is in the repository history for everyone
with read access (and in every fork), and quiver would copy it into manifests.

## Example
```json
{"mcpServers": {"github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/",
  "headers": {"Authorization": "Bearer ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"}}}}
```
Use instead:
```json
{"mcpServers": {"github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/",
  "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"}}}}
```

## Fix
Reference a variable the host expands (the hint gives the host's syntax), then revoke the exposed
secret: removing it from the file does not remove it from history. A false positive (a public id that
looks random) can be suppressed on its line.

## References
GitHub Docs, extending the cloud agent with MCP (`COPILOT_MCP_*` secrets); VS Code MCP configuration
(`inputs` with `password`); gitleaks / GitHub secret scanning token formats.
""",
)


RULES: tuple[Rule, ...] = (LITERAL_SECRET,)
