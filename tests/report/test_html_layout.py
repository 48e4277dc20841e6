"""The budget page of a 112-agent project in headless Chromium at 1400 and 390 px: nothing overflows,
the overview bars are proportional to tokens across agents, and the table sorts and filters.

The DOM is measured by a probe script appended to a copy of the page (the page itself is untouched);
it clicks the table's headings, types into the filter and writes what it saw into the DOM, which
Chromium's `--dump-dom` returns.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_html import run_chromium

from quiver.report.html import render_html
from quiver.report.html_overview import OVERVIEW_MAX

ROOT = Path(__file__).resolve().parents[2]
# as tests/conftest.py: QUIVER_CORPUS, else QUIVER_SHARED/corpus, else ../shared/corpus; absent: skipped (CI fails)
CORPUS = Path(os.environ.get("QUIVER_CORPUS", Path(os.environ.get("QUIVER_SHARED", ROOT.parent / "shared")) / "corpus"))
CORPUS_MISSING = f"public corpus not found at {CORPUS} (set QUIVER_CORPUS, or run scripts/fetch-corpus.sh)"
DEMO = ROOT / "examples" / "demo"
PROBE = """
<script>
(function(){
var out={width:window.innerWidth,scroll:document.documentElement.scrollWidth,offenders:[]};
document.querySelectorAll("body *").forEach(function(el){
  var r=el.getBoundingClientRect();
  if(r.width>0&&r.right>window.innerWidth+0.5&&!el.closest("pre")&&out.offenders.length<5){
    out.offenders.push(el.tagName+"."+el.className+" right="+Math.round(r.right));}
});
out.bars=Array.prototype.map.call(document.querySelectorAll(".ov"),function(li){
  var w=0;li.querySelectorAll(".preloaded,.meta,.index").forEach(function(s){w+=s.getBoundingClientRect().width;});
  return [li.dataset.agent,Number(li.dataset.tokens),w,li.querySelector(".ov-track").getBoundingClientRect().width];
});
function order(){return Array.prototype.map.call(document.querySelectorAll("#agents tbody tr"),function(r){
  return r.hidden||r.classList.contains("chart-row")?null:r.dataset.agent;}).filter(function(x){return x!==null;});}
function click(label){Array.prototype.forEach.call(document.querySelectorAll("#agents th button"),function(b){
  if(b.textContent===label)b.click();});}
function sorted(label){var th=Array.prototype.filter.call(document.querySelectorAll("#agents th"),function(t){
  return t.textContent===label;})[0];return th.getAttribute("aria-sort");}
out.initial=order();out.initialSort=sorted("tokens up front");
click("agent");out.byName=order();out.nameSort=sorted("agent");
click("agent");out.byNameDesc=order();
click("all preloaded");out.byBaseline=order();out.baselineSort=sorted("all preloaded");
click("tokens up front");out.byInitial=order();out.initialFirst=sorted("tokens up front");
click("tokens up front");out.byInitialAsc=order();
var buttons=document.querySelectorAll("#agents tbody tr button.ch"),first=buttons[buttons.length-1];
out.charts=document.querySelectorAll("svg.chart").length;
first.click();var opened=document.querySelector("#agents tr.chart-row svg.chart");
out.opened=opened?[opened.dataset.agent,Array.prototype.map.call(opened.querySelectorAll("rect"),function(r){
  return [r.getAttribute("class"),r.getBoundingClientRect().width,r.querySelector("title").textContent];})]:null;
out.openedFits=opened?opened.getBoundingClientRect().right<=window.innerWidth+0.5:false;
first.click();out.closed=document.querySelectorAll("#agents tr.chart-row").length;
out.height=document.documentElement.scrollHeight;
var f=document.getElementById("filter");f.value="mcp-expert";f.dispatchEvent(new Event("input"));
out.filtered=order();out.shown=document.getElementById("shown").textContent;
out.reasons=Array.prototype.map.call(document.querySelectorAll("#agents tbody tr"),function(r){
  return [r.dataset.agent,r.querySelector("td.why").textContent];});
var target=window.parent.document,pre=target.createElement("pre");pre.id="probe";
pre.textContent=JSON.stringify(out);target.body.appendChild(pre);
})();
</script>
"""


@pytest.fixture(scope="module")
def big_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's servers and lock with the 112 real agents of awesome-copilot, compiled."""
    corpus = CORPUS
    if not corpus.is_dir():
        if os.environ.get("QUIVER_REQUIRE_CORPUS") == "1":
            pytest.fail(f"{CORPUS_MISSING}; QUIVER_REQUIRE_CORPUS=1 makes that a failure", pytrace=False)
        pytest.skip(CORPUS_MISSING)
    root = tmp_path_factory.mktemp("p112") / "project"
    shutil.copytree(DEMO, root, ignore=shutil.ignore_patterns("build", ".quiver", ".claude", "agents"))
    shutil.copytree(corpus / "awesome-copilot" / "agents", root / ".github" / "agents")
    proc = subprocess.run(
        [sys.executable, "-m", "quiver", "compile", "-q", "-C", str(root)], capture_output=True, text=True, check=False
    )
    # the corpus names servers and tools the demo lacks (AGT008/AGT010 errors: exit 1, manifests still written)
    assert proc.returncode in (0, 1, 2), proc.stderr[-2000:]
    assert len(list((root / "build" / "quiver").glob("*.json"))) == 113
    page = root / "report.html"
    proc = subprocess.run(
        [sys.executable, "-m", "quiver", "budget", "-C", str(root), "--html", str(page)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return root


def _probe(project: Path, tmp_path: Path, width: int) -> dict[str, Any]:
    """The page with the probe, in an iframe `width` px wide (a headless window is at least 500 px)."""
    page = (project / "report.html").read_text(encoding="utf-8").replace("</body>", PROBE + "</body>")
    probed = tmp_path / f"probe-{width}.html"
    probed.write_text(
        '<!DOCTYPE html><html><body style="margin:0">'
        f'<iframe style="border:0;width:{width}px;height:900px" srcdoc="{html.escape(page, quote=True)}"></iframe>'
        "</body></html>",
        encoding="utf-8",
    )
    dom = run_chromium(probed, tmp_path / f"profile-{width}", "--dump-dom", "--window-size=1600,1000")
    match = re.search(r'<pre id="probe">(.*?)</pre>', dom.stdout.decode("utf-8"), re.DOTALL)
    assert match, "the probe did not run"
    result: dict[str, Any] = json.loads(html.unescape(match.group(1)))
    return result


def _manifests(project: Path) -> dict[str, dict[str, Any]]:
    out = {}
    for path in (project / "build" / "quiver").glob("*.json"):
        if path.name != "index.json":
            m = json.loads(path.read_text(encoding="utf-8"))
            out[m["agent"]["id"]] = m
    return out


@pytest.mark.parametrize("width", [1400, 390])
def test_the_112_agent_page_fits_the_screen_and_its_overview_is_on_one_scale(
    big_project: Path, tmp_path: Path, width: int
) -> None:
    probe = _probe(big_project, tmp_path, width)
    assert probe["width"] == width
    assert probe["scroll"] <= width, probe["offenders"]
    assert probe["offenders"] == []
    manifests = _manifests(big_project)
    bars = probe["bars"]
    assert len(manifests) == 112 and len(bars) == OVERVIEW_MAX  # the heaviest; the table has every agent
    tokens = [t for _, t, _, _ in bars]
    assert tokens == sorted(tokens, reverse=True)  # heaviest first
    (heaviest, top, top_px, track) = bars[0]
    assert top == manifests[heaviest]["budget"]["initial_tokens"] > 0 and track > 100
    for agent, value, px, _ in bars:
        assert value == manifests[agent]["budget"]["initial_tokens"]
        assert px == pytest.approx(top_px * value / top, abs=1.5), agent  # one scale for every agent


def test_the_table_sorts_by_any_heading_numbers_descending_first_and_filters(big_project: Path, tmp_path: Path) -> None:
    probe = _probe(big_project, tmp_path, 1400)
    manifests = _manifests(big_project)

    def key(agent: str, field: str) -> int:
        return int(manifests[agent]["budget"][field])

    initial = probe["initial"]
    assert len(initial) == 112
    up_front = [key(a, "initial_tokens") for a in initial]
    assert up_front == sorted(up_front, reverse=True) and probe["initialSort"] == "none"
    by_name = probe["byName"]
    assert sorted(by_name) == sorted(initial) and probe["nameSort"] == "ascending"  # text: ascending first
    firsts = [a[0].lower() for a in by_name]  # the browser's collation orders within a letter; letters ascend
    assert firsts == sorted(firsts) and by_name != initial
    assert probe["byNameDesc"] == list(reversed(probe["byName"]))
    baseline = [key(a, "baseline_tokens") for a in probe["byBaseline"]]
    assert baseline == sorted(baseline, reverse=True) and probe["baselineSort"] == "descending"
    # the first click on a numeric heading sorts it descending, also on the column the page opened with
    assert probe["initialFirst"] == "descending"
    assert [key(a, "initial_tokens") for a in probe["byInitial"]] == up_front  # ties: the browser's collation
    ascending = [key(a, "initial_tokens") for a in probe["byInitialAsc"]]
    assert ascending == sorted(ascending)
    assert probe["filtered"] and all("mcp-expert" in a for a in probe["filtered"])
    assert probe["shown"] == str(len(probe["filtered"]))
    reasons = dict(probe["reasons"])
    for agent in initial[:4]:  # the heavy agents say why tool search is off for them and what costs most
        assert "does not support tool search" in reasons[agent]
        assert "top cost" in reasons[agent]


@pytest.mark.parametrize("width", [1400, 390])
def test_an_agents_chart_is_drawn_on_demand_from_the_table_on_the_pages_scale(
    big_project: Path, tmp_path: Path, width: int
) -> None:
    probe = _probe(big_project, tmp_path, width)
    assert probe["charts"] == 0  # 112 agents: no chart until one is asked for
    agent, rects = probe["opened"]
    assert agent == probe["byInitialAsc"][-1]  # the last row's agent (the heaviest, sorted ascending)
    b = _manifests(big_project)[agent]["budget"]
    drawn = {cls.split()[1]: (px, title) for cls, px, title in rects}
    assert drawn["baseline"][1] == f"baseline: {b['baseline_tokens']:,} tokens"
    if b["deferred_tokens"] and b["baseline_tokens"]:
        ratio = drawn["deferred"][0] / drawn["baseline"][0]
        assert ratio == pytest.approx(b["deferred_tokens"] / b["baseline_tokens"], rel=0.05)
    assert probe["openedFits"] and probe["closed"] == 0  # a second click folds it again


def test_a_thousand_agents_make_a_page_under_500_kb_that_fits_a_phone(big_project: Path, tmp_path: Path) -> None:
    """1,000 agents: the 112 real ones, each copied under new names (the same shapes and sizes)."""
    real = sorted(_manifests(big_project).values(), key=lambda m: str(m["agent"]["id"]))
    fleet = []
    for n in range(1000):
        m = json.loads(json.dumps(real[n % len(real)]))
        m["agent"]["id"] = f"{m['agent']['id']}-{n:04d}"
        fleet.append(m)
    page = render_html(fleet)
    size = len(page.encode("utf-8"))
    print(f"1,000 agents: {size / 1000:,.0f} KB")
    assert size < 500_000
    assert page.index('id="agents"') < page.index("<h2>Overview</h2>")  # the summary and table first
    (tmp_path / "fleet").mkdir()
    (tmp_path / "fleet" / "report.html").write_text(page, encoding="utf-8")
    probe = _probe(tmp_path / "fleet", tmp_path, 390)
    assert probe["scroll"] <= 390, probe["offenders"]
    assert len(probe["initial"]) == 1000 and probe["charts"] == 0
    print(f"height at 390 px: {probe['height']:,} px")
