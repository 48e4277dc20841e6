"""Rule declarations for MCP server values (MCP005-MCP010); the checks live in `_mcp_values`."""

from __future__ import annotations

from quiver.rules import Rule

LITERAL_SECRET = Rule(
    code="MCP005",
    name="literal-secret-in-config",
    severity="error",
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

UNDEFINED_INPUT_VARIABLE = Rule(
    code="MCP006",
    name="undefined-input-variable",
    severity="error",
    message="`{ref}` in `{field}` of server `{server}` names no entry of `inputs`",
    hint="{suggestion}",
    doc="""\
## What it does
Flags a `${input:id}` reference in `.vscode/mcp.json` whose `id` is not declared in the file's
`inputs` list.

## Why is this bad?
VS Code cannot prompt for the value: the server fails to start, or receives the literal text
`${input:id}` as its token.

## Example
```json
{"inputs": [{"type": "promptString", "id": "api-key", "password": true}],
 "servers": {"docs": {"type": "http", "url": "https://example.com/mcp",
   "headers": {"Authorization": "Bearer ${input:apikey}"}}}}
```
Use instead:
```json
{"inputs": [{"type": "promptString", "id": "api-key", "password": true}],
 "servers": {"docs": {"type": "http", "url": "https://example.com/mcp",
   "headers": {"Authorization": "Bearer ${input:api-key}"}}}}
```

## Fix
The hint names the closest declared id, or the `inputs` entry to add.

## References
VS Code MCP configuration reference, input variables.
""",
)

INPUT_VARIABLE_OUTSIDE_VSCODE = Rule(
    code="MCP007",
    name="input-variable-outside-vscode",
    severity="warning",
    message="`{ref}` in `{field}` of server `{server}` is a VS Code input; {host} do not prompt for inputs",
    hint="{advice}",
    doc="""\
## What it does
Flags `${input:id}` in an agent's `mcp-servers` or an `mcpServers` file (`.mcp.json`,
`.github/mcp.json`, `mcp-config.json`).

## Why is this bad?
Only VS Code has input variables. The Copilot cloud agent and CLI and Claude Code pass the text
through unchanged, so the server receives `${input:id}` as its credential, and VS Code does not forward
servers that need inputs to Copilot sessions.

## Example
```yaml
mcp-servers:
  imaging:
    type: http
    url: https://example.com/mcp
    headers: {x-api-key: "${input:imaging-key}"}
```
Use instead:
```yaml
    headers: {x-api-key: "${{ secrets.COPILOT_MCP_IMAGING_KEY }}"}
```

## Fix
Reference an environment variable or secret in the host's syntax (the hint gives it).

## References
Formats research §2.7, interpolation matrix; VS Code MCP configuration ("servers needing inputs are not
forwarded").
""",
)

UNEXPANDED_VARIABLE = Rule(
    code="MCP008",
    name="unexpanded-variable-syntax",
    severity="warning",
    message="`{ref}` in `{field}` of server `{server}` is not expanded by {host}",
    hint="{advice}",
    doc="""\
## What it does
Flags a variable reference written in a syntax that the host reading the file does not expand.
Per file:
- `.vscode/mcp.json`: `$VAR`, `${VAR:-default}`, `${{ ... }}`, and `${VAR}` unless `VAR` is a
  predefined variable (`workspaceFolder`, `userHome`, ...): VS Code wants `${env:VAR}`;
- agent `mcp-servers`: `${env:VAR}`, and `${{ ... }}` contexts other than `secrets.` and `vars.`;
- `mcp-config.json` and `.github/mcp.json` (Copilot): `${env:VAR}` and `${{ ... }}`;
- `.mcp.json` (Claude Code and the Copilot CLI): `$VAR` (Claude Code expands only `${VAR}`),
  `${env:VAR}` and `${{ ... }}`;
- any file but quiver's own: an `env` or `headers` value that is a bare `COPILOT_MCP_*` name without `$`.

`$VAR` and `${VAR}` in the `args` of a shell command (`bash -c ...`) are left to the shell.

## Why is this bad?
The server receives the reference text itself: authentication fails with a confusing error, or a
literal `${env:TOKEN}` ends up in a request.

## Example
```yaml
mcp-servers:
  docs:
    type: http
    url: https://example.com/mcp
    headers: {Authorization: "Bearer ${env:DOCS_TOKEN}"}
```
Use instead:
```yaml
    headers: {Authorization: "Bearer ${{ secrets.COPILOT_MCP_DOCS_TOKEN }}"}
```

## Fix
Rewrite the reference in the host's syntax (the hint gives it). Older GitHub docs accepted a bare
`COPILOT_MCP_*` name as an `env` value; current docs use `$COPILOT_MCP_*`.

## References
Formats research §2.7 (interpolation matrix); GitHub Docs, extending the cloud agent with MCP;
VS Code variables reference; Claude Code MCP docs (environment variable expansion).
""",
)

INSECURE_SERVER_URL = Rule(
    code="MCP009",
    name="insecure-server-url",
    severity="warning",
    message="server `{server}` is reached over plain HTTP at `{host}`",
    hint="use `https://`; plain HTTP is fine only for a loopback address",
    doc="""\
## What it does
Flags a remote server `url` that starts with `http://` and does not point at the local machine
(`localhost`, `*.localhost`, `127.x.x.x`, `[::1]`, `0.0.0.0`). URLs whose host is a variable are not
judged.

## Why is this bad?
Tool calls, results and the `Authorization` header travel unencrypted: anyone on the path can read the
token or alter what the model receives.

## Example
```json
{"mcpServers": {"docs": {"type": "http", "url": "http://mcp.example.com/mcp"}}}
```
Use instead:
```json
{"mcpServers": {"docs": {"type": "http", "url": "https://mcp.example.com/mcp"}}}
```

## Fix
Use the server's HTTPS endpoint. Wrong for a server reached through a private tunnel that already
encrypts: suppress the finding there.

## References
MCP specification, transports (security warning on HTTP); OWASP transport layer security.
""",
)

DOWNLOAD_PIPED_TO_SHELL = Rule(
    code="MCP010",
    name="download-piped-to-shell",
    severity="error",
    message="server `{server}` runs code downloaded at start-up: `{snippet}`",
    hint="install a pinned release (a package version or an image digest) and run that",
    doc="""\
## What it does
Flags a server whose start-up command runs code fetched from the network. In `command` and `args`:
a download piped into a shell
or interpreter (`curl ... | sh`, `wget -qO- ... | python`, `iwr ... | iex`), a shell fed by command or
process substitution (`bash -c "$(curl ...)"`, `bash <(curl ...)`), or a launcher whose package is a
URL (`npx https://...`, `uvx --from git+https://...`, `pipx run --spec https://...`, `bunx https://...`).
A URL after a named package is that package's argument, not code being fetched: `npx -y mcp-remote
https://mcp.example.com/sse` runs the `mcp-remote` package and is not reported.

## Why is this bad?
Whatever the URL serves at that moment runs with the agent's credentials, on every start: one
compromised host or a changed branch and the server becomes a remote code execution path. Nothing
pins or reviews the code.

## Example
```json
{"mcpServers": {"tool": {"command": "bash", "args": ["-c", "curl -fsSL https://get.example.com | sh"]}}}
```
Use instead:
```json
{"mcpServers": {"tool": {"command": "npx", "args": ["-y", "@example/mcp-server@1.4.2"]}}}
```

## Fix
Install a released, versioned package (or a container image by digest) and start that.

## References
OWASP Top 10 for LLM applications, LLM03 supply chain; MCP security best practices (local servers).
""",
)
