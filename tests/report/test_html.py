"""The budget report: one self-contained HTML page whose charts a real browser draws."""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path
from typing import Any

import pytest

from fixtures.usage.workload import TickClock, plan_workload, play
from quiver.advise import advise, manifest_view
from quiver.commands import advise as advise_command
from quiver.commands import budget as budget_command
from quiver.commands.budget import BudgetOptions
from quiver.report.html import COLORS, render_html
from quiver.runtime.usage import UsageRecorder, read_usage, usage_path
from quiver.stats import summarize

ROOT = Path(__file__).resolve().parents[2]
DEMO_BUILD = ROOT / "examples" / "demo" / "build" / "quiver"
SERVE = ROOT / "examples" / "serve"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]


def demo_manifests() -> list[dict[str, Any]]:
    return [
        json.loads(p.read_text(encoding="utf-8")) for p in sorted(DEMO_BUILD.glob("*.json")) if p.name != "index.json"
    ]


@pytest.fixture
def served(tmp_path: Path) -> Path:
    """examples/serve with 60 recorded sessions of its agent."""
    root = tmp_path / "serve"
    shutil.copytree(SERVE, root, ignore=shutil.ignore_patterns(".quiver"))
    manifest = json.loads((root / "build" / "quiver" / "assistant.json").read_text(encoding="utf-8"))
    with UsageRecorder(usage_path(root, "assistant"), clock=TickClock()) as rec:
        play(rec, manifest, plan_workload(60, seed=5))
    return root


def test_the_page_is_deterministic_and_self_contained() -> None:
    manifests = demo_manifests()
    page = render_html(manifests)
    assert page == render_html(list(reversed(manifests)))
    assert page.startswith("<!DOCTYPE html>")
    for remote in ("<script src", "<link", " src=", "url(", 'href="http', "@import", "fetch(", "XMLHttpRequest"):
        assert remote not in page, remote
    assert re.findall(r'<svg class="chart" data-agent="([^"]+)"', page) == [
        "browser-tester",
        "ops",
        "release-notes",
        "researcher",
    ]
    assert "<h2>Largest schemas</h2><p class=muted>The 20 largest of " in page
    assert "No recorded usage" in page


def test_each_agents_chart_draws_up_front_deferred_and_baseline_bars_to_one_scale() -> None:
    (ops,) = [m for m in demo_manifests() if m["agent"]["id"] == "ops"]  # Claude Code: git up front, a listing
    page = render_html([ops])
    bars = re.findall(r'<rect class="bar (\w+)" x="([\d.]+)" y="\d+" width="([\d.]+)"', page)
    widths = {series: float(width) for series, _, width in bars}
    assert set(widths) == {"preloaded", "index", "deferred", "baseline"}  # no search-tool cost on Claude Code
    b = ops["budget"]
    assert widths["baseline"] / widths["deferred"] == pytest.approx(b["baseline_tokens"] / b["deferred_tokens"], 0.01)
    assert widths["preloaded"] / widths["baseline"] == pytest.approx(
        b["preloaded_tokens"] / b["baseline_tokens"], rel=0.01
    )


def test_budget_writes_the_report_with_the_advice_when_usage_was_recorded(served: Path) -> None:
    out = budget_command.run(BudgetOptions(served, served / "report.html"))
    assert out.text.splitlines()[0].split() == ["agent", "host", "search", "preloaded", "deferred", "tokens", "up",
                                                "front", "all", "preloaded", "saving"]  # fmt: skip
    # Copilot CLI: 12 MCP tools and 2 built-ins stay under its 31, so all are up front
    assert out.text.splitlines()[2].split()[:7] == ["assistant", "copilot-cli", "off", "12", "0", "970", "970"]
    assert out.messages == (f"wrote {served / 'report.html'}",)
    page = (served / "report.html").read_text(encoding="utf-8")
    views = [manifest_view(json.loads((served / "build" / "quiver" / "assistant.json").read_text()))]
    usage = summarize(read_usage(served / ".quiver" / "usage").events)
    settings, _ = advise_command.server_settings(served, views)
    (a,) = advise(usage, views, settings).agents
    assert '<rect class="bar advised"' in page
    assert f"<h3>assistant ({a.sessions} sessions)</h3>" in page
    assert f"preload: {', '.join(a.to_preload)}<br>" in page
    assert "diff --git a/quiver.toml b/quiver.toml" in page
    assert list((served).glob(".report.html.*")) == []  # written through a temp file, nothing left over


# ------------------------------------------------------------------------------------- in a real browser


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.fail(
            "headless Chromium is required to check that the report's charts are drawn and is not installed: "
            "run `apt-get update && apt-get install -y chromium` (CI: .ci/run installs it)"
        )
    return found


def run_chromium(page: Path, profile: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    command = [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args, page.as_uri()]
    result = subprocess.run(command, capture_output=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr.decode(errors="replace")[-2000:]
    return result


def decode_png(data: bytes) -> tuple[int, int, list[bytes]]:
    """A minimal PNG decoder (8-bit RGB or RGBA, not interlaced): width, height and the rows of pixels."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    width = height = channels = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert (depth, interlace) == (8, 0) and color in (2, 6)
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows: list[bytes] = []
    previous = bytearray(stride)
    for y in range(height):
        filter_type = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if filter_type == 1:
                line[i] = (line[i] + left) & 0xFF
            elif filter_type == 2:
                line[i] = (line[i] + up) & 0xFF
            elif filter_type == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif filter_type == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 0xFF
        rows.append(bytes(line) if channels == 3 else bytes(b for i, b in enumerate(line) if i % 4 != 3))
        previous = line
    return width, height, rows


def count_color(rows: list[bytes], hex_color: str) -> int:
    rgb = bytes.fromhex(hex_color.lstrip("#"))
    return sum(sum(1 for x in range(0, len(row), 3) if row[x : x + 3] == rgb) for row in rows)


def test_headless_chromium_draws_the_chart_bars(served: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.html"
    budget_command.run(BudgetOptions(served, report))
    dom = run_chromium(report, tmp_path / "profile-dom", "--dump-dom").stdout.decode("utf-8")
    rects = re.findall(r'<rect class="bar (\w+)"[^>]*?width="([\d.]+)" height="([\d.]+)"', dom)
    drawn = {series for series, w, h in rects if float(w) > 0 and float(h) > 0}
    # Copilot CLI sends the 12 MCP tools up front (fewer than its 31): the host's chart has no deferred part
    assert drawn == {"preloaded", "baseline", "advised"}

    shot = tmp_path / "report.png"
    run_chromium(report, tmp_path / "profile-shot", f"--screenshot={shot}", "--window-size=1200,900")
    width, height, rows = decode_png(shot.read_bytes())
    assert (width, height) == (1200, 900)
    # a bar is hundreds of pixels wide and 24 high; the legend's swatch of the same colour is about 11 x 11
    for series in ("preloaded", "baseline", "advised"):
        assert count_color(rows, COLORS[series]) > 1500, series
    assert count_color(rows, "#ffffff") < width * height  # and the page is not blank


def test_every_agents_chart_uses_the_pages_shared_scale() -> None:
    manifests = demo_manifests()
    page = render_html(manifests)
    baselines = dict(
        re.findall(r'<svg class="chart" data-agent="([^"]+)".*?<rect class="bar baseline"[^>]*width="([\d.]+)"', page)
    )
    b = {m["agent"]["id"]: m["budget"]["baseline_tokens"] for m in manifests}
    assert float(baselines["researcher"]) / float(baselines["browser-tester"]) == pytest.approx(
        b["researcher"] / b["browser-tester"], rel=0.01
    )
    assert "<b>" + f"{sum(m['budget']['initial_tokens'] for m in manifests):,}" + "</b> tokens up front" in page
