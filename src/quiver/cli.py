"""The `quiver` command line. Each command parses its parameters into the typed options of its module
(`quiver.commands.NAME.NameOptions`), calls that module's `run`, and returns `render` of the `Outcome`: the
group exits with its code. Errors funnel through `quiver.commands._group`. The modules are imported when
their command runs, so that start-up stays fast."""

from __future__ import annotations

from pathlib import Path

import click

from quiver import __version__
from quiver.commands._group import QuiverGroup
from quiver.commands._options import (
    baseline_options,
    changed_only_option,
    format_option,
    host_option,
    lexical_option,
    output_option,
    project_option,
    report_options,
    selection_options,
)
from quiver.commands._options import color as _color
from quiver.commands._options import root as _root
from quiver.commands._options import split as _split_csv
from quiver.commands.outcome import render
from quiver.commands.serve import LOG_LEVELS
from quiver.host_exports import EMITTERS


def _stats() -> click.Command:
    from quiver.commands.usage_cli import stats_command

    return stats_command


def _advise() -> click.Command:
    from quiver.commands.usage_cli import advise_command

    return advise_command


def _budget() -> click.Command:
    from quiver.commands.usage_cli import budget_command

    return budget_command


def _ledger() -> click.Command:
    from quiver.commands.ledger_cli import ledger_group

    return ledger_group


_LAZY = {"stats": _stats, "advise": _advise, "budget": _budget, "ledger": _ledger}  # imported when they run


@click.group(cls=QuiverGroup, lazy=_LAZY, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="quiver")
def cli() -> None:
    """quiver: compile, lint, diff and serve agent definitions and their MCP tools."""


@cli.command("compile")
@project_option
@click.option("--check", is_flag=True, help="Write nothing; exit 1 when committed manifests are stale.")
@click.option(
    "--emit",
    "emit_hosts",
    multiple=True,
    type=click.Choice(EMITTERS),
    help="Also write the host API `tools` array (repeatable).",
)
@click.option("--out", default=None, help="Output directory (default: `out` in config, build/quiver).")
@click.option("--quiet", "-q", is_flag=True, help="Do not print the budget table.")
@format_option
@host_option
def compile_command(
    project: Path, check: bool, emit_hosts: tuple[str, ...], out: str | None, quiet: bool, fmt: str, host: str | None
) -> int:
    """Resolve every agent and write its manifest, plus index.json and a budget table."""
    from quiver.commands.compile import CompileOptions, run

    options = CompileOptions(
        root=_root(project), check=check, emit_hosts=emit_hosts, out=out, quiet=quiet, fmt=fmt, host=host
    )
    return render(run(options))


@cli.command("explain")
@project_option
@click.argument("agent")
@click.argument("tool", required=False)
@format_option
@host_option
@click.option("--flows", is_flag=True, help="The agent's toxic flows and each tool's capability labels, with reasons.")
def explain_command(project: Path, agent: str, tool: str | None, fmt: str, host: str | None, flows: bool) -> int:
    """Why each tool of AGENT is up front or deferred on its host, with the rule and the file:line that decided."""
    from quiver.commands.explain import ExplainOptions, run

    options = ExplainOptions(root=_root(project), agent=agent, tool=tool, fmt=fmt, host=host, flows=flows)
    return render(run(options))


@cli.command("snapshot")
@project_option
@click.option(
    "--server", "servers", multiple=True, help="Only this server (repeatable); with --import, the n-th names the n-th."
)
@click.option(
    "--import",
    "import_paths",
    multiple=True,
    help="Import a tools/list JSON or a directory of tool snapshots (repeatable, each with its --server).",
)
@click.option("--check", is_flag=True, help="Write nothing; exit 1 when a live server no longer matches the lock.")
@click.option("--timeout", type=float, default=None, help="Seconds to wait for each server (default: its timeout).")
def snapshot_command(
    project: Path, servers: tuple[str, ...], import_paths: tuple[str, ...], check: bool, timeout: float | None
) -> int:
    """Capture each configured server's tools (initialize + tools/list) into quiver.lock.json."""
    from quiver.commands.snapshot import SnapshotOptions, run

    options = SnapshotOptions(
        root=_root(project), servers=servers, import_paths=import_paths, check=check, timeout=timeout
    )
    return render(run(options))


@cli.command("lint")
@project_option
@click.argument("paths", nargs=-1, type=click.Path())
@selection_options
@report_options
@baseline_options("Report only findings whose fingerprint is not in this file.", "every current finding")
@click.option("--fix", is_flag=True, help="Apply safe fixes, then report what is left.")
@changed_only_option("Only findings on lines changed against --base.")
@click.option("--base", default=None, help="Git ref for --changed-only (default: merge-base with the default branch).")
@output_option
def lint_command(
    project: Path,
    paths: tuple[str, ...],
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    fmt: str,
    fail_on: str,
    baseline: Path | None,
    update_baseline: bool,
    fix: bool,
    changed_only: bool,
    base: str | None,
    output: Path | None,
) -> int:
    """Check agent files, MCP configs and tool definitions."""
    from quiver.commands.lint import LintOptions, run

    options = LintOptions(
        root=_root(project),
        paths=paths,
        select=_split_csv(select),
        ignore=_split_csv(ignore),
        fmt=fmt,
        fail_on=fail_on,
        baseline=baseline,
        update_baseline=update_baseline,
        fix=fix,
        changed_only=changed_only,
        base=base,
        output=output,
        color=_color(output),
    )
    return render(run(options))


@cli.command("diff")
@project_option
@click.argument("base", required=False)
@click.argument("head", required=False)
@click.option(
    "--server",
    default=None,
    help="Compare only this server; also the name of a side that is a tools/list JSON or a snapshot "
    "directory (default: the other side's server when it has exactly one).",
)
@report_options
@changed_only_option("github format: only annotations on lines changed against BASE.")
@click.option(
    "--commits",
    metavar="RANGE",
    help="Batch: diff every commit of RANGE (A..B) that touched the path BASE against its parent, in one process.",
)
@click.option(
    "--catalog",
    "catalogs",
    metavar="PATH",
    multiple=True,
    help="Diff this tool catalog (a snapshot directory, tools/list JSON or lock file, from the project root) at "
    "BASE against the working tree; repeatable. Instead of the project's lock file.",
)
@output_option
def diff_command(
    project: Path,
    base: str | None,
    head: str | None,
    server: str | None,
    fmt: str,
    fail_on: str,
    changed_only: bool,
    commits: str | None,
    catalogs: tuple[str, ...],
    output: Path | None,
) -> int:
    """Which tool-contract changes between BASE and HEAD break callers (default: merge-base..working tree).

    Each side is a git ref, a quiver.lock.json, a tools/list JSON, a directory of per-tool snapshots, or one
    of these at a ref (REF:PATH).
    """
    from quiver.commands.diff import DiffOptions, run

    options = DiffOptions(
        root=_root(project),
        base=base,
        head=head,
        server=server,
        fmt=fmt,
        fail_on=fail_on,
        output=output,
        changed_only=changed_only,
        color=_color(output),
        commits=commits,
        catalogs=catalogs,
    )
    return render(run(options))


@cli.command("rule")
@project_option
@click.argument("rule_id", required=False)
@click.option("--all", "show_all", is_flag=True, help="List every rule: code, name, severity, summary.")
@format_option
def rule_command(project: Path, rule_id: str | None, show_all: bool, fmt: str) -> int:
    """Show a rule's documentation (by code or name), or list them all."""
    from quiver.commands.rule import RuleOptions, run

    _root(project)  # accepted, as by every command; the rules do not depend on the project
    return render(run(RuleOptions(rule_id=rule_id, show_all=show_all, fmt=fmt)))


@cli.command("schema")
@click.argument("name", required=False)
@output_option
def schema_command(name: str | None, output: Path | None) -> int:
    """Print one of quiver's JSON Schemas (`manifest`, `lock`, ...), or list them with their `$id`."""
    from quiver.commands.schema import SchemaOptions, run

    return render(run(SchemaOptions(name=name, output=output)))


@cli.command("serve")
@click.option(
    "--project",
    "-C",
    "project",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Project root for the ledger and usage records, and MANIFEST (default: the manifest's project).",
)
@click.argument("manifest", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--http",
    "http",
    default=None,
    metavar="[HOST:]PORT",
    help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (host: 127.0.0.1; port 0: any).",
)
@click.option(
    "--token",
    default=None,
    help="Bearer token HTTP clients must send; required with --http (default: $QUIVER_TOKEN, preferred).",
)
@click.option(
    "--startup-timeout",
    type=float,
    default=None,
    help="Seconds an upstream server may take to start (default: its timeout_ms, else 30).",
)
@click.option(
    "--log-level",
    type=click.Choice(LOG_LEVELS),
    default="info",
    show_default=True,
    help="Level of quiver's own log on stderr.",
)
@click.option(
    "--ledger",
    default=None,
    metavar="PATH",
    help="Execution ledger (default: $QUIVER_LEDGER_URL, else `ledger` in config: .quiver/ledger.db of the project).",
)
@click.option("--no-ledger", is_flag=True, help="Dispatch calls directly: no ledger, no idempotency, no retries.")
@click.option(
    "--allow-host", "allow_hosts", multiple=True, metavar="HOST[:PORT|:*]",
    help="With --http: a Host header clients may send (repeatable); needed to bind 0.0.0.0 or ::.",
)  # fmt: skip
@click.option(
    "--allow-origin", "allow_origins", multiple=True, metavar="ORIGIN",
    help="With --http: an Origin browsers may send, e.g. https://app.example.com (repeatable).",
)  # fmt: skip
def serve_command(
    project: Path | None,
    manifest: Path,
    http: str | None,
    token: str | None,
    startup_timeout: float | None,
    log_level: str,
    ledger: str | None,
    no_ledger: bool,
    allow_hosts: tuple[str, ...],
    allow_origins: tuple[str, ...],
) -> int:
    """Serve MANIFEST (from `quiver compile`) as an MCP gateway: stdio by default, or streamable HTTP.

    Every call goes through the durable execution ledger (idempotency keys, retries, approvals).
    """
    from quiver.commands.serve import ServeOptions, run

    options = ServeOptions(
        manifest=manifest,
        project=_root(project) if project is not None else None,
        http=http,
        token=token,
        startup_timeout=startup_timeout,
        log_level=log_level,
        ledger=ledger,
        no_ledger=no_ledger,
        allow_hosts=allow_hosts,
        allow_origins=allow_origins,
    )
    return render(run(options))


@cli.command("search")
@project_option
@click.argument("query")
@click.option("--agent", default=None, help="Rank only the tools this agent resolves to (default: every server).")
@click.option("--limit", "-k", type=click.IntRange(min=1), default=10, show_default=True, help="Results to show.")
@format_option
@lexical_option
@click.option(
    "--explain", is_flag=True, help="Show what made each score: the words' and the embedding's shares, each signal."
)
def search_command(
    project: Path, query: str, agent: str | None, limit: int, fmt: str, lexical: bool, explain: bool
) -> int:
    """Rank the project's tools for QUERY with the tool search index (what a deferring agent's search finds)."""
    from quiver.commands.search import SearchOptions, run

    options = SearchOptions(
        root=_root(project), query=query, agent=agent, limit=limit, fmt=fmt, lexical=lexical, explain=explain
    )
    return render(run(options))


@cli.command("route-test")
@project_option
@click.argument("cases", required=False, type=click.Path(dir_okay=False, path_type=Path))
@format_option
@baseline_options("Also fail when a case ranks worse than in this file, or the MRR dropped.", "the current ranks")
@lexical_option
def route_test_command(
    project: Path, cases: Path | None, fmt: str, baseline: Path | None, update_baseline: bool, lexical: bool
) -> int:
    """Rank each routing case of CASES (default: `routes` in config, .quiver/routes.yaml); exit 1 on a miss.

    Prints recall@1/@3/@5 and MRR, and each case not ranked first with the tool that won instead.
    """
    from quiver.commands.route_test import RouteTestOptions, run

    options = RouteTestOptions(
        root=_root(project), cases=cases, fmt=fmt, baseline=baseline, update_baseline=update_baseline, lexical=lexical
    )
    return render(run(options))


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="quiver")
