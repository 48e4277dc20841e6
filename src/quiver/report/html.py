"""The budget report (`quiver budget --html`): one self-contained HTML page, inline CSS, SVG and script.

No network asset, no timestamp: the same manifests and usage give the same bytes. First the totals and the
sortable, filterable agent table, then an overview of the heaviest agents on one scale (`html_overview`);
then per agent a bar chart of the tokens carried up front (preloaded schemas, meta-tools, server index),
the deferred tokens and the all-preloaded baseline (plus the advised up-front tokens when there is advice),
drawn to the same shared scale so charts compare across agents. Up to `OPEN_SECTIONS` agents each chart is
on the page; with more, a chart is drawn on demand (the agent's name in the table opens it below its row),
so 1,000 agents make a page of a few hundred kilobytes, not one chart each. Then the largest schemas of the
catalog, and the advice when usage was recorded. The layout fits a 390 px screen.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from quiver.advise import Advice, AgentAdvice
from quiver.report.html_overview import CSS as OVERVIEW_CSS
from quiver.report.html_overview import agent_table, budget, flow_badge, overview, shared_scale, totals, up_front_parts
from quiver.stats import UsageStats

__all__ = ["COLORS", "render_html"]

TOP_SCHEMAS = 20
OPEN_SECTIONS = 12  # with more agents, an agent's chart is drawn when asked for (from the table)
CHART_WIDTH = 720
LABEL_WIDTH = 190
BAR_HEIGHT = 24
BAR_GAP = 12
# Fill colours of the chart's series: distinct from every other colour on the page (tests look for them).
COLORS = {
    "preloaded": "#2563eb",
    "meta": "#7c3aed",
    "index": "#db2777",
    "deferred": "#f59e0b",
    "baseline": "#6b7280",
    "advised": "#059669",
}
_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#111827;background:#ffffff;margin:2rem auto;
max-width:1100px;padding:0 1rem}
h1{font-size:1.6rem;margin:0 0 .3rem}h2{font-size:1.25rem;margin:2rem 0 .5rem;border-bottom:1px solid #e5e7eb}
h3{font-size:1.05rem;margin:1.2rem 0 .4rem}
table{border-collapse:collapse;margin:.5rem 0 1rem}th,td{padding:.2rem .6rem;border-bottom:1px solid #e5e7eb;
text-align:left;vertical-align:top}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
td{overflow-wrap:anywhere}svg.chart{max-width:100%;height:auto}summary{cursor:pointer}
.muted{color:#4b5563}.legend span{display:inline-block;margin-right:1rem}
.legend i{display:inline-block;width:.8rem;height:.8rem;margin-right:.3rem;vertical-align:-1px}
pre{background:#f3f4f6;padding:.8rem;overflow:auto;font-size:12px}
svg text{font:12px system-ui,sans-serif;fill:#111827}
"""
_CSS += OVERVIEW_CSS


def render_html(
    manifests: Sequence[Mapping[str, Any]],
    *,
    advice: Advice | None = None,
    usage: UsageStats | None = None,
    patch: str = "",
) -> str:
    """The whole page. `manifests` are compiled manifests (parsed JSON), in any order."""
    ordered = sorted(manifests, key=lambda m: str(m["agent"]["id"]))
    advised = {a.agent: a for a in advice.agents} if advice is not None else {}
    scale = shared_scale(ordered)
    for a in advised.values():
        scale = max(scale, a.initial_tokens_after)
    on_demand = len(ordered) > OPEN_SECTIONS
    body = [
        "<h1>quiver budget</h1>",
        totals(ordered),
        '<p class="muted">Tokens are what a model reads of the tool definitions '
        "(o200k_base unless a manifest says otherwise).</p>",
        agent_table(ordered, advised, charts_on_demand=on_demand),
        _legend(),
        overview(ordered, COLORS),
    ]
    if on_demand:
        body.append(_chart_script(scale))
    else:
        body.append("<h2>Per agent</h2>")
        for manifest in ordered:
            body.append(_agent_section(manifest, advised.get(str(manifest["agent"]["id"])), scale))
    body.append(_top_schemas(ordered))
    body.append(_advice_section(advice, usage, patch))
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        "<title>quiver budget</title>\n"
        f"<style>{_CSS}</style>\n</head>\n<body>\n" + "\n".join(body) + "\n</body>\n</html>\n"
    )


def _legend() -> str:
    names = {
        "preloaded": "preloaded schemas",
        "meta": "meta-tools",
        "index": "server index",
        "deferred": "deferred schemas",
        "baseline": "all preloaded (baseline)",
        "advised": "advised up front",
    }
    items = "".join(f'<span><i style="background:{COLORS[k]}"></i>{escape(v)}</span>' for k, v in names.items())
    return f'<p class="legend">{items}</p>'


def _agent_section(manifest: Mapping[str, Any], advice: AgentAdvice | None, scale: int) -> str:
    agent = str(manifest["agent"]["id"])
    b = budget(manifest)
    bars: list[tuple[str, list[tuple[str, int]]]] = [
        ("up front", up_front_parts(b)),
        ("deferred (on demand)", [("deferred", b.get("deferred_tokens", 0))]),
        ("all preloaded", [("baseline", b.get("baseline_tokens", 0))]),
    ]
    if advice is not None:
        bars.append(("advised up front", [("advised", advice.initial_tokens_after)]))
    source = escape(str(manifest["agent"].get("source") or ""))
    facts = (
        f'<p class="muted">{source}; {b.get("preloaded_tools", 0)} preloaded and {b.get("deferred_tools", 0)} '
        f"deferred tools; {b.get('initial_tokens', 0):,} tokens up front</p>" + _chart(agent, bars, scale)
    )
    badge, _ = flow_badge(manifest)
    return f'<section id="agent-{escape(agent)}"><h3>{escape(agent)}{badge}</h3>{facts}</section>'


# The chart `_chart` draws, drawn by the page for an agent whose name is clicked in the table: the row's
# `data-c` holds its numbers (preloaded, meta, index, deferred, baseline, advised or -1).
_CHART_SCRIPT = """
(function(){
var table=document.getElementById("agents"),scale=%(scale)d,colors=%(colors)s;
var W=%(width)d,L=%(label)d,H=%(bar)d,G=%(gap)d,span=W-L-80,NS="http://www.w3.org/2000/svg";
function el(name,attrs,text){var e=document.createElementNS(NS,name);
for(var k in attrs)e.setAttribute(k,attrs[k]);if(text!==undefined)e.textContent=text;return e;}
function chart(agent,c){var bars=[["up front",[["preloaded",c[0]],["meta",c[1]],["index",c[2]]]],
["deferred (on demand)",[["deferred",c[3]]]],["all preloaded",[["baseline",c[4]]]]];
if(c[5]>=0)bars.push(["advised up front",[["advised",c[5]]]]);
var largest=scale,h=bars.length*(H+G)+G;bars.forEach(function(b){var t=0;b[1].forEach(function(p){t+=p[1];});
largest=Math.max(largest,t,1);});
var svg=el("svg",{"class":"chart","data-agent":agent,width:W,height:h,viewBox:"0 0 "+W+" "+h,role:"img",
"aria-label":"tokens of agent "+agent});
bars.forEach(function(b,row){var y=G+row*(H+G),x=L,total=0;svg.appendChild(el("text",{x:0,y:y+H-7},b[0]));
b[1].forEach(function(p){if(p[1]<=0)return;var w=Math.max(1,p[1]/largest*span);
var r=el("rect",{"class":"bar "+p[0],x:x.toFixed(1),y:y,width:w.toFixed(1),height:H,fill:colors[p[0]]});
r.appendChild(el("title",{},p[0]+": "+p[1].toLocaleString("en-US")+" tokens"));svg.appendChild(r);x+=w;total+=p[1];});
svg.appendChild(el("text",{x:(x+6).toFixed(1),y:y+H-7},total.toLocaleString("en-US")));});return svg;}
table.tBodies[0].addEventListener("click",function(e){var button=e.target.closest("button.ch");if(!button)return;
var row=button.closest("tr"),next=row.nextElementSibling;
if(next&&next.classList.contains("chart-row")){next.remove();return;}
var open=document.createElement("tr"),cell=document.createElement("td");open.className="chart-row";
cell.colSpan=row.cells.length;cell.appendChild(chart(row.dataset.agent,row.dataset.c.split(",").map(Number)));
open.appendChild(cell);row.parentNode.insertBefore(open,row.nextSibling);});
})();
"""


def _chart_script(scale: int) -> str:
    """The on-demand chart drawer, with the page's scale and the series' colours."""
    colors = json.dumps(COLORS, sort_keys=True, separators=(",", ":"))
    values = {"width": CHART_WIDTH, "label": LABEL_WIDTH, "bar": BAR_HEIGHT, "gap": BAR_GAP, "scale": scale}
    return f"<script>{_CHART_SCRIPT % {**values, 'colors': colors}}</script>"


def _chart(agent: str, bars: Sequence[tuple[str, Sequence[tuple[str, int]]]], scale: int) -> str:
    """Horizontal bars on the page's shared scale (`scale` tokens = the full bar width); each bar is a
    stack of (series, tokens) segments."""
    largest = max(scale, max((sum(v for _, v in parts) for _, parts in bars), default=0), 1)
    span = CHART_WIDTH - LABEL_WIDTH - 80
    height = len(bars) * (BAR_HEIGHT + BAR_GAP) + BAR_GAP
    out = [
        f'<svg class="chart" data-agent="{escape(agent)}" xmlns="http://www.w3.org/2000/svg" width="{CHART_WIDTH}" '
        f'height="{height}" viewBox="0 0 {CHART_WIDTH} {height}" role="img" '
        f'aria-label="tokens of agent {escape(agent)}">'
    ]
    for row, (label, parts) in enumerate(bars):
        y = BAR_GAP + row * (BAR_HEIGHT + BAR_GAP)
        out.append(f'<text x="0" y="{y + BAR_HEIGHT - 7}">{escape(label)}</text>')
        x = float(LABEL_WIDTH)
        for series, value in parts:
            if value <= 0:
                continue
            width = max(1.0, value / largest * span)
            out.append(
                f'<rect class="bar {series}" x="{x:.1f}" y="{y}" width="{width:.1f}" height="{BAR_HEIGHT}" '
                f'fill="{COLORS[series]}"><title>{escape(series)}: {value:,} tokens</title></rect>'
            )
            x += width
        total = sum(v for _, v in parts)
        out.append(f'<text x="{x + 6:.1f}" y="{y + BAR_HEIGHT - 7}">{total:,}</text>')
    out.append("</svg>")
    return "".join(out)


def _top_schemas(manifests: Sequence[Mapping[str, Any]]) -> str:
    """The largest schemas, with their load per agent (up to `OPEN_SECTIONS` agents) or counts of each load."""
    tools: dict[str, tuple[int, list[tuple[str, str]]]] = {}
    for m in manifests:
        agent = str(m["agent"]["id"])
        for t in m.get("tools", []):
            key = f"{t['server']}/{t['name']}"
            tokens = int(t.get("tokens") or 0)
            entry = tools.setdefault(key, (tokens, []))
            entry[1].append((agent, str(t.get("load", "?"))))
    top = sorted(tools.items(), key=lambda item: (-item[1][0], item[0]))[:TOP_SCHEMAS]
    per_agent = len(manifests) <= OPEN_SECTIONS
    rows = "".join(
        f'<tr><td>{escape(key)}</td><td class="n">{tokens:,}</td><td>{escape(_loads(loads, per_agent))}</td></tr>'
        for key, (tokens, loads) in top
    )
    head = "load per agent" if per_agent else "agents that load it"
    return (
        f"<h2>Largest schemas</h2><p class=muted>The {len(top)} largest of {len(tools)} tools.</p>"
        f"<table><tr><th>tool</th><th class=n>tokens</th><th>{head}</th></tr>{rows}</table>"
    )


def _loads(loads: Sequence[tuple[str, str]], per_agent: bool) -> str:
    if per_agent:
        return ", ".join(f"{agent}: {load}" for agent, load in loads)
    counts = {load: sum(1 for _, each in loads if each == load) for load in sorted({load for _, load in loads})}
    return ", ".join(f"{load} for {n}" for load, n in counts.items())


def _advice_section(advice: Advice | None, usage: UsageStats | None, patch: str) -> str:
    if advice is None or usage is None or not usage.sessions:
        return "<h2>Advice</h2><p class=muted>No recorded usage: serve agents with <code>quiver serve</code>.</p>"
    parts = [f"<h2>Advice</h2><p class=muted>From {len(usage.sessions)} recorded session(s).</p>"]
    for a in advice.agents:
        parts.append(
            f"<h3>{escape(a.agent)} ({a.sessions} sessions)</h3><table>"
            f"<tr><th></th><th class=n>now</th><th class=n>advised</th></tr>"
            f'<tr><td>tokens per session (expected)</td><td class="n">{a.current_tokens:,.1f}</td>'
            f'<td class="n">{a.advised_tokens:,.1f}</td></tr>'
            f'<tr><td>discovery steps per session</td><td class="n">{a.current_steps:.2f}</td>'
            f'<td class="n">{a.advised_steps:.2f}</td></tr>'
            f'<tr><td>tokens up front</td><td class="n">{a.initial_tokens_before:,}</td>'
            f'<td class="n">{a.initial_tokens_after:,}</td></tr></table>'
            f"<p>preload: {escape(', '.join(a.to_preload) or 'no change')}<br>"
            f"defer: {escape(', '.join(a.to_defer) or 'no change')}</p>"
        )
    for note in advice.notes:
        parts.append(f"<p class=muted>{escape(note)}</p>")
    if patch:
        parts.append(f"<h3>Config change</h3><p>Apply with <code>git apply</code>:</p><pre>{escape(patch)}</pre>")
    return "".join(parts)
