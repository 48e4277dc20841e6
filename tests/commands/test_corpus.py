from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from quiver.cli import cli as main


def test_compile_over_the_awesome_copilot_agents_ends_without_a_traceback(corpus: Path, tmp_path: Path) -> None:
    agents = tmp_path / "repo" / ".github" / "agents"
    shutil.copytree(corpus / "awesome-copilot" / "agents", agents)
    result = CliRunner().invoke(main, ["compile", "--project", str(tmp_path / "repo"), "-q"])
    assert "Traceback" not in result.output and "internal error" not in result.output
    assert result.exit_code in (0, 2)
    for line in result.stderr.splitlines():
        if line.startswith("error: "):
            assert ".github/agents/" in line and ":" in line  # one line, located
    written = list((tmp_path / "repo/build/quiver").glob("*.json"))
    total = len(list(agents.glob("*.md")))
    failed = sum(1 for line in result.stderr.splitlines() if line.startswith("error: "))
    assert len(written) - 1 == total - failed  # every readable agent compiled (+ index.json)
    assert total == 112
