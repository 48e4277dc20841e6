"""The budget page's top half: totals, one overview chart on a shared scale, the sortable agent table.

The overview draws every agent on the same scale (the largest up-front plus deferred total), heaviest
first, so the agents that load most up front lead the page. The table is sorted by tokens up front, can
be re-sorted by any column and filtered by text with a small inline script (the page stays one file, no
network asset), and says why tool search is on or off and what costs most up front. Below 640 px each
row becomes a card, so nothing overflows a phone screen.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from quiver.advise import AgentAdvice

UP_FRONT = ("preloaded", "meta", "index")
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
.agents{width:100%}.agents th button{font:inherit;font-weight:600;background:none;border:0;padding:0;
cursor:pointer;color:inherit;text-align:inherit}
.agents th[aria-sort=ascending] button::after{content:" \\25B2"}
.agents th[aria-sort=descending] button::after{content:" \\25BC"}
.agents td.why{max-width:22rem;overflow-wrap:anywhere}.agents tfoot td{font-weight:600}
.flow{font-size:.75rem;padding:0 .3rem;border-radius:.2rem;white-space:nowrap}
.flow.toxic{background:#fee2e2;color:#991b1b}.flow.builtin{background:#f3f4f6;color:#374151}
#filter{font:inherit;padding:.25rem .4rem;width:100%;max-width:22rem;box-sizing:border-box}
@media (max-width:640px){
body{margin:1rem auto}.ov{grid-template-columns:minmax(0,1fr) 4.5rem}
.ov-name{grid-column:1 / -1}.agents,.agents tbody,.agents tfoot,.agents tr,.agents td{display:block;width:auto}
.agents thead tr{display:flex;flex-wrap:wrap;gap:.2rem .8rem}.agents thead th{border:0;padding:0}
.agents tr{border-bottom:1px solid #d1d5db;padding:.3rem 0}.agents td{border:0;padding:.05rem 0;
text-align:left!important;overflow-wrap:anywhere}.agents td.why{max-width:none}
.agents td::before{content:attr(data-label) ": ";color:#4b5563}
}
"""
SCRIPT = """
(function(){
var table=document.getElementById("agents"),body=table.tBodies[0],filter=document.getElementById("filter");
var count=document.getElementById("shown");
table.tHead.addEventListener("click",function(e){
var button=e.target.closest("button");if(!button)return;
var th=button.parentNode,key=button.dataset.key,numeric=button.dataset.numeric==="1";
var dir=th.getAttribute("aria-sort")==="descending"?"ascending":"descending";
if(th.getAttribute("aria-sort")==="none"&&!numeric)dir="ascending";
Array.prototype.forEach.call(table.tHead.rows[0].cells,function(c){c.setAttribute("aria-sort","none");});
th.setAttribute("aria-sort",dir);
var rows=Array.prototype.slice.call(body.rows),sign=dir==="ascending"?1:-1;
rows.sort(function(a,b){var x=a.dataset[key],y=b.dataset[key];
var d=numeric?Number(x)-Number(y):x.localeCompare(y);return d?sign*d:a.dataset.agent.localeCompare(b.dataset.agent);});
rows.forEach(function(r){body.appendChild(r);});});
filter.addEventListener("input",function(){var q=filter.value.trim().toLowerCase(),n=0;
Array.prototype.forEach.call(body.rows,function(r){var hit=!q||r.dataset.text.indexOf(q)>=0;r.hidden=!hit;n+=hit;});
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
    """One row per agent, heaviest first, all on the shared scale: up-front segments, then deferred (faded)."""
    scale = shared_scale(manifests)
    rows = []
    for m in by_weight(manifests):
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
            f'<li class="ov" data-agent="{agent}" data-tokens="{initial}"><a class="ov-name" href="#agent-{agent}">'
            f'{agent}</a><span class="ov-track">{bars}</span><span class="ov-value">{initial:,}</span></li>'
        )
    return (
        f'<h2>Overview</h2><p class="muted">Tokens up front per agent, heaviest first, every bar on one scale '
        f"({scale:,} tokens = full width); the faded part is deferred, loaded only when found.</p>"
        f'<ol class="overview">{"".join(rows)}</ol>'
    )


def agent_table(manifests: Sequence[Mapping[str, Any]], advised: Mapping[str, AgentAdvice]) -> str:
    columns = [*COLUMNS, ("advised", "advised up front", True)] if advised else list(COLUMNS)
    head = "".join(
        f'<th aria-sort="{"descending" if key == "initial" else "none"}"{" class=n" if numeric else ""}>'
        f'<button type="button" data-key="{key}" data-numeric="{int(numeric)}">{escape(label)}</button></th>'
        for key, label, numeric in columns
    )
    rows = [_row(m, advised.get(str(m["agent"]["id"])), columns) for m in by_weight(manifests)]
    foot = _total_row(manifests, advised, columns)
    return (
        '<h2>Agents</h2><p><label for="filter" class="muted">Filter (agent, search, reason, flow): </label>'
        '<input id="filter" type="search" autocomplete="off"> '
        f'<span class="muted"><span id="shown">{len(rows)}</span> of {len(rows)} shown; click a heading to sort'
        f'</span></p><table id="agents" class="agents"><thead><tr>{head}</tr></thead>'
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


def _row(m: Mapping[str, Any], advice: AgentAdvice | None, columns: Sequence[tuple[str, str, bool]]) -> str:
    b = budget(m)
    agent = str(m["agent"]["id"])
    search = "on" if (m.get("tool_search") or {}).get("active") else "off"
    reason = _reason(m)
    badge, flow = flow_badge(m)
    values: dict[str, tuple[str, str]] = {  # key -> (sort value, shown html)
        "agent": (agent, f'<a href="#agent-{escape(agent)}">{escape(agent)}</a>{badge}'),
        "search": (search, search),
        "reason": (reason, escape(reason)),
    }
    for key, field in _COUNTED:
        values[key] = (str(b.get(field, 0)), f"{b.get(field, 0):,}")
    after = advice.initial_tokens_after if advice else None
    values["advised"] = (str(after if after is not None else -1), f"{after:,}" if after is not None else "-")
    data = "".join(f' data-{key}="{escape(values[key][0])}"' for key, _, _ in columns)
    text = escape(f"{agent} {search} {reason} {flow}".lower())
    cells = "".join(
        f'<td data-label="{escape(label)}"{" class=n" if numeric else ""}{" class=why" if key == "reason" else ""}>'
        f"{values[key][1]}</td>"
        for key, label, numeric in columns
    )
    return f'<tr{data} data-text="{text}">{cells}</tr>'


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
    for key, label, numeric in columns:
        if key == "agent":
            shown = f"total ({len(manifests)} agents)"
        elif key in sums:
            shown = f"{sums[key]:,}"
        elif key == "advised":
            shown = f"{sum(a.initial_tokens_after for a in advised.values()):,}" if advised else "-"
        else:
            shown = ""
        cells.append(f'<td data-label="{escape(label)}"{" class=n" if numeric else ""}>{shown}</td>')
    return f"<tr>{''.join(cells)}</tr>"
