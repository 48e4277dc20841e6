"""One-off conversion (issue 25 item 6): contract rule fixtures into the shared rule-fixture layout.

`tests/fixtures/contract/<CODE>/case.json` held `{"kind", "bad": {"old", "new"}, "good": {"old", "new"}}` and
`<CODE>/expected.json` the bad case's findings. The shared harness (tests/rule_harness.py) reads every rule's
fixtures as `<CODE>/bad/` and `<CODE>/good/` with `bad/expected.json`, so each side becomes its own
`case.json` (`{"kind", "old", "new"}`) and `expected.json` moves, byte for byte, into `bad/`. Run once from
the repository root: `python scripts/split_contract_fixtures.py`; a directory already split is left alone.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "contract"


def split(folder: Path) -> bool:
    combined = folder / "case.json"
    if not combined.is_file():
        return False
    case = json.loads(combined.read_text(encoding="utf-8"))
    for side in ("bad", "good"):
        (folder / side).mkdir()
        text = json.dumps({"kind": case["kind"], **case[side]}, indent=2, sort_keys=True, ensure_ascii=False)
        (folder / side / "case.json").write_text(text + "\n", encoding="utf-8")
    (folder / "expected.json").rename(folder / "bad" / "expected.json")
    combined.unlink()
    return True


def main() -> None:
    done = [p.name for p in sorted(FIXTURES.iterdir()) if re.fullmatch(r"[A-Z]+\d{3}", p.name) and split(p)]
    print(f"split {len(done)} contract fixture(s)")


if __name__ == "__main__":
    main()
