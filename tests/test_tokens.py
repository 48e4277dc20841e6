from __future__ import annotations

import json
from pathlib import Path

from quiver.tokens import count_tools_payload, counter

EXPECTED = {"github": 19_124, "notion": 17_165, "playwright": 7_425}


def test_token_counts_of_the_real_catalogs_match_o200k_base_exactly(corpus: Path) -> None:
    assert counter().name.startswith("o200k_base")
    total = 0
    for path in sorted((corpus / "catalogs").glob("*.json")):
        catalog = json.loads(path.read_text(encoding="utf-8"))
        n = count_tools_payload(catalog["tools"])
        if catalog["server"] in EXPECTED:
            assert n == EXPECTED[catalog["server"]], catalog["server"]
        total += n
    assert total == 50_370
