"""The budget page's top half: totals, the sortable agent table, one overview chart on a shared scale.

The table comes first, heaviest up front first; any heading re-sorts it (a numeric column descending on its
first click, a text column ascending) and a text filter narrows it, with a small inline script (the page
stays one file, no network asset). It says why tool search is on or off and what costs most up front.
The overview draws the heaviest agents (all of them up to `OVERVIEW_MAX`) on the same scale. The table
carries no per-cell data: sorting reads the cells, the phone layout's labels come from the CSS, so a
thousand agents stay well under 500 KB. Below 640 px each row becomes a compact card.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from quiver.advise import AgentAdvice

OVERVIEW_MAX = 30  # agents drawn in the overview; the table lists every agent
COLUMNS = (  # key, header, numeric
    ("agent", "agent", False),
    ("search", "search", False),
    ("reason", "why", False),
    ("preloaded", "preloaded", True),
    ("deferred", "deferred", True),
    ("initial", "tokens up front", True),
    ("baseline", "all preloaded", True),
    ("saving", "saving", True),
)
CSS = """
.totals{font-size:1rem}.totals b{font-variant-numeric:tabular-nums}
.overview{list-style:none;margin:.5rem 0 1rem;padding:0}
.ov{display:grid;grid-template-columns:minmax(0,13rem) minmax(0,1fr) 5.5rem;gap:.5rem;align-items:center;
margin:2px 0}
.ov-name{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.ov-track{display:flex;height:14px;background:#f3f4f6;min-width:0}.ov-track span{display:block;height:100%}
.ov-track .deferred{opacity:.35}.ov-value{text-align:right;font-variant-numeric:tabular-nums}
.agents{width:100%}.agents th button,.agents td button{font:inherit;background:none;border:0;padding:0;
cursor:pointer;color:inherit;text-align:inherit}.agents th button{font-weight:600}
.agents td button{color:#1d4ed8;text-decoration:underline}
.agents th[aria-sort=ascending] button::after{content:" \\25B2"}
.agents th[aria-sort=descending] button::after{content:" \\25BC"}
.agents td.why{max-width:22rem;overflow-wrap:anywhere}.agents tfoot td{font-weight:600}
.flow{font-size:.75rem;padding:0 .3rem;border-radius:.2rem;white-space:nowrap}
.flow.toxic{background:#fee2e2;color:#991b1b}.flow.builtin{background:#f3f4f6;color:#374151}
#filter{font:inherit;padding:.25rem .4rem;width:100%;max-width:22rem;box-sizing:border-box}
@media (max-width:640px){
body{margin:1rem auto}.ov{grid-template-columns:minmax(0,1fr) 4.5rem}
.ov-name{grid-column:1 / -1}.agents,.agents tbody,.agents tfoot,.agents tr{display:block;width:auto}
.agents thead tr{display:flex;flex-wrap:wrap;gap:.2rem .8rem}.agents thead th{border:0;padding:0}
.agents tr{border-bottom:1px solid #d1d5db;padding:.3rem 0}.agents td{display:inline;border:0;padding:0 .6rem 0 0;
text-align:left!important;overflow-wrap:anywhere}.agents td.why{display:block;max-width:none;font-size:.9em}
.agents td:first-child{display:block;font-weight:600}.agents td:first-child::before{content:none}
.agents td::before{color:#4b5563}
}
"""
SCRIPT = """
(function(){
var table=document.getElementById("agents"),body=table.tBodies[0],filter=document.getElementById("filter");
var count=document.getElementById("shown"),heads=table.tHead.rows[0].cells;
function value(row,i,numeric){var t=row.cells[i].textContent;
if(!numeric)return t;var n=Number(t.replace(/,/g,""));return isNaN(n)?-1:n;}
table.tHead.addEventListener("click",function(e){
var button=e.target.closest("button");if(!button)return;
var th=button.parentNode,i=th.cellIndex,numeric=button.dataset.numeric==="1",was=th.getAttribute("aria-sort");
var dir=was==="none"?(numeric?"descending":"ascending"):(was==="descending"?"ascending":"descending");
Array.prototype.forEach.call(heads,function(c){c.setAttribute("aria-sort","none");});
th.setAttribute("aria-sort",dir);
Array.prototype.slice.call(body.querySelectorAll("tr.chart-row")).forEach(function(r){r.remove();});
var rows=Array.prototype.slice.call(body.rows),sign=dir==="ascending"?1:-1;
rows.sort(function(a,b){var x=value(a,i,numeric),y=value(b,i,numeric);
var d=numeric?x-y:x.localeCompare(y);return d?sign*d:a.dataset.agent.localeCompare(b.dataset.agent);});
rows.forEach(function(r){body.appendChild(r);});});
filter.addEventListener("input",function(){var q=filter.value.trim().toLowerCase(),n=0;
Array.prototype.forEach.call(body.rows,function(r){if(r.classList.contains("chart-row"))return;
var hit=!q||r.textContent.toLowerCase().indexOf(q)>=0;r.hidden=!hit;
var next=r.nextElementSibling;if(next&&next.classList.contains("chart-row"))next.hidden=!hit;n+=hit;});
count.textContent=String(n);});
})();
"""


# Table column key -> budget field, for the numeric columns summed in the totals row.
_COUNTED: tuple[tuple[str, str], ...] = (
    ("preloaded", "preloaded_tools"),
    ("deferred", "deferred_tools"),
    ("initial", "initial_tokens"),
    ("baseline", "baseline_tokens"),
    ("saving", "saving_tokens"),
)


def budget(manifest: Mapping[str, Any]) -> dict[str, int]:
    b = manifest.get("budget") or {}
    return {k: int(v) for k, v in b.items() if isinstance(v, int | float) and not isinstance(v, bool)}


def up_front_parts(b: Mapping[str, int]) -> list[tuple[str, int]]:
    deferring = b.get("deferred_tools", 0) > 0
    return [
        ("preloaded", b.get("preloaded_tokens", 0)),
        ("meta", b.get("meta_tool_tokens", 0) if deferring else 0),
        ("index", b.get("server_index_tokens", 0) if deferring else 0),
    ]


def shared_scale(manifests: Sequence[Mapping[str, Any]]) -> int:
    """The largest bar of the page: every chart draws to this many tokens across its width."""
    largest = 0
    for m in manifests:
        b = budget(m)
        largest = max(largest, b.get("initial_tokens", 0) + b.get("deferred_tokens", 0), b.get("baseline_tokens", 0))
    return largest or 1


def by_weight(manifests: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Heaviest up front first; ties by agent id (deterministic)."""
    return sorted(manifests, key=lambda m: (-budget(m).get("initial_tokens", 0), str(m["agent"]["id"])))


def totals(manifests: Sequence[Mapping[str, Any]]) -> str:
    initial = sum(budget(m).get("initial_tokens", 0) for m in manifests)
    base = sum(budget(m).get("baseline_tokens", 0) for m in manifests)
    searching = sum(1 for m in manifests if (m.get("tool_search") or {}).get("active"))
    pct = f" ({(base - initial) / base:.0%})" if base else ""
    return (
        f'<p class="totals">{len(manifests)} agent(s), tool search on for {searching}: '
        f"<b>{initial:,}</b> tokens up front in total, <b>{base:,}</b> if every tool were preloaded, "
        f"saving <b>{base - initial:,}</b>{pct}.</p>"
    )


def overview(manifests: Sequence[Mapping[str, Any]], colors: Mapping[str, str]) -> str:
    """One row per agent (the `OVERVIEW_MAX` heaviest), all on the shared scale: up-front segments, then
    deferred (faded)."""
    scale = shared_scale(manifests)
    rows = []
    ordered = by_weight(manifests)
    for m in ordered[:OVERVIEW_MAX]:
        agent = escape(str(m["agent"]["id"]))
        b = budget(m)
        segments = [*up_front_parts(b), ("deferred", b.get("deferred_tokens", 0))]
        bars = "".join(
            f'<span class="{series}" style="width:{value / scale * 100:.3f}%;background:{colors[series]}" '
            f'title="{series}: {value:,} tokens"></span>'
            for series, value in segments
            if value > 0
        )
        initial = b.get("initial_tokens", 0)
        rows.append(
            f'<li class="ov" data-agent="{agent}" data-tokens="{initial}"><span class="ov-name">{agent}</span>'
            f'<span class="ov-track">{bars}</span><span class="ov-value">{initial:,}</span></li>'
        )
    which = (
        f"the {OVERVIEW_MAX} heaviest of {len(ordered)} agents (the table lists them all)"
        if len(ordered) > OVERVIEW_MAX
        else "per agent"
    )
    return (
        f'<h2>Overview</h2><p class="muted">Tokens up front, {which}, heaviest first, every bar on one scale '
        f"({scale:,} tokens = full width); the faded part is deferred, loaded only when found.</p>"
        f'<ol class="overview">{"".join(rows)}</ol>'
    )


def agent_table(
    manifests: Sequence[Mapping[str, Any]], advised: Mapping[str, AgentAdvice], *, charts_on_demand: bool = False
) -> str:
    """The table, heaviest up front first. With `charts_on_demand`, an agent's name is a button that opens
    its chart below its row (`data-c`: the chart's numbers); otherwise a link to its section."""
    columns = [*COLUMNS, ("advised", "advised up front", True)] if advised else list(COLUMNS)
    head = "".join(
        f'<th aria-sort="none"{" class=n" if numeric else ""}>'
        f'<button type="button" data-numeric="{int(numeric)}">{escape(label)}</button></th>'
        for _, label, numeric in columns
    )
    rows = [_row(m, advised.get(str(m["agent"]["id"])), columns, charts_on_demand) for m in by_weight(manifests)]
    foot = _total_row(manifests, advised, columns)
    labels = "".join(
        f'.agents td:nth-child({i})::before{{content:"{label}: "}}'
        for i, (_, label, _) in enumerate(columns, start=1)
        if i > 1
    )
    how = "click an agent for its chart, a heading to sort" if charts_on_demand else "click a heading to sort"
    return (
        f"<style>@media (max-width:640px){{{labels}}}</style>"
        '<h2>Agents</h2><p><label for="filter" class="muted">Filter (agent, search, reason, flow): </label>'
        '<input id="filter" type="search" autocomplete="off"> '
        f'<span class="muted"><span id="shown">{len(rows)}</span> of {len(rows)} shown, heaviest up front first; '
        f'{how}</span></p><table id="agents" class="agents"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody><tfoot>{foot}</tfoot></table><script>{SCRIPT}</script>"
    )


def _reason(m: Mapping[str, Any]) -> str:
    search = m.get("tool_search") or {}
    reason = str(search.get("reason") or "")
    preloaded = [t for t in m.get("tools", []) if t.get("load") == "preloaded"]
    if preloaded:
        top = max(preloaded, key=lambda t: (int(t.get("tokens") or 0), f"{t['server']}/{t['name']}"))
        reason += (
            f"; top cost {top['server']}/{top['name']}: {int(top.get('tokens') or 0):,} tokens"
            f" ({len(preloaded)} tool{'s' if len(preloaded) > 1 else ''} preloaded)"
        )
    return reason


def _row(
    m: Mapping[str, Any], advice: AgentAdvice | None, columns: Sequence[tuple[str, str, bool]], charts: bool
) -> str:
    b = budget(m)
    agent = str(m["agent"]["id"])
    search = "on" if (m.get("tool_search") or {}).get("active") else "off"
    badge, _ = flow_badge(m)
    name = (
        f"<button class=ch>{escape(agent)}</button>{badge}"
        if charts
        else f'<a href="#agent-{escape(agent)}">{escape(agent)}</a>{badge}'
    )
    values: dict[str, str] = {"agent": name, "search": search, "reason": escape(_reason(m))}
    for key, field in _COUNTED:
        values[key] = f"{b.get(field, 0):,}"
    after = advice.initial_tokens_after if advice else None
    values["advised"] = f"{after:,}" if after is not None else "-"
    cells = "".join(
        f"<td{' class=n' if numeric else ''}{' class=why' if key == 'reason' else ''}>{values[key]}</td>"
        for key, _, numeric in columns
    )
    chart = ""
    if charts:
        parts = [v for _, v in up_front_parts(b)] + [b.get("deferred_tokens", 0), b.get("baseline_tokens", 0)]
        parts.append(after if after is not None else -1)
        chart = f' data-c="{",".join(str(v) for v in parts)}"'
    return f'<tr data-agent="{escape(agent)}"{chart}>{cells}</tr>'


def flow_badge(m: Mapping[str, Any]) -> tuple[str, str]:
    """The agent's flow marker (html) and its words for the filter: a toxic flow through tools quiver knows
    (SEC101), else one through a host built-in (SEC102); none when the manifest records no toxic flow."""
    found = [f for f in (m.get("flows") or {}).get("found", []) if f.get("kind") == "toxic"]
    if not found:
        return "", ""
    flow = found[0]
    witness = flow.get("witness") or {}
    chain = " -> ".join(str(witness.get(k, "?")) for k in ("untrusted_input", "private_data", "exfiltration"))
    words, kind = ("flow via built-in", "builtin") if flow.get("through_builtin") else ("toxic flow", "toxic")
    title = f"{words}: {chain} (quiver explain {m['agent']['id']} --flows)"
    return f' <span class="flow {kind}" title="{escape(title)}">{words}</span>', words


def _total_row(
    manifests: Sequence[Mapping[str, Any]], advised: Mapping[str, AgentAdvice], columns: Sequence[tuple[str, str, bool]]
) -> str:
    sums = {key: sum(budget(m).get(field, 0) for m in manifests) for key, field in _COUNTED}
    cells = []
    for key, _, numeric in columns:
        if key == "agent":
            shown = f"total ({len(manifests)} agents)"
        elif key in sums:
            shown = f"{sums[key]:,}"
        elif key == "advised":
            shown = f"{sum(a.initial_tokens_after for a in advised.values()):,}" if advised else "-"
        else:
            shown = ""
        cells.append(f"<td{' class=n' if numeric else ''}>{shown}</td>")
    return f"<tr>{''.join(cells)}</tr>"
