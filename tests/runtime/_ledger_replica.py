"""One gateway replica for test_replicas.py: the real `quiver serve MANIFEST --http 127.0.0.1:0` on a
shared PostgreSQL ledger.

python _ledger_replica.py MANIFEST LEDGER_URL NAME WORKDIR LEASE_MARGIN_S

It runs `quiver.commands.serve.run` (what `quiver serve` runs) with the executor that run would build
for a PostgreSQL ledger, plus two things only a multi-host deployment has:

* the executor's owner is `NAME.replica/PID/TOKEN`: a host of its own, so that, as with replicas on
  separate machines, no replica can tell another is dead by its pid: the lease is the only way;
* `run_recovery_sweeps` every 0.1 s, in a thread with its own event loop and store (the gateway would
  run it as a background task), each recovered action appended to WORKDIR/NAME-recovered.jsonl.

The bearer token comes from QUIVER_TOKEN; the readiness line `listening on URL` goes to stderr.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
import threading
import time
from pathlib import Path

import anyio

from quiver.commands.serve import ServeOptions, run
from quiver.runtime.approval import ElicitationApprover
from quiver.runtime.executor import LedgerExecutor, RecoveryReport
from quiver.runtime.ledger_open import run_recovery_sweeps
from quiver.runtime.ledger_postgres import PostgresLedger

SWEEP_S = 0.1


def sweeper(url: str, owner: str, margin: float, log: Path) -> None:
    store = PostgresLedger(url, lease_margin_s=margin)
    executor = LedgerExecutor(store, owner=owner)

    def record(report: RecoveryReport) -> None:
        with log.open("a") as out:
            for item in report.recovered:
                line = {
                    "recovered": item.action.id,
                    "from": item.from_state,
                    "to": item.action.state,
                    "at": time.time(),
                }
                out.write(json.dumps(line) + "\n")

    anyio.run(lambda: run_recovery_sweeps(executor, interval_s=SWEEP_S, on_report=record))


def main(manifest: str, url: str, name: str, workdir: str, margin_text: str) -> int:
    margin = float(margin_text)
    owner = f"{name}.replica/{os.getpid()}/{secrets.token_hex(4)}"
    log = Path(workdir) / f"{name}-recovered.jsonl"
    threading.Thread(target=sweeper, args=(url, owner, margin, log), daemon=True).start()
    executor = LedgerExecutor(PostgresLedger(url, lease_margin_s=margin), owner=owner, approver=ElicitationApprover())
    options = ServeOptions(Path(manifest), http="127.0.0.1:0", log_level="warning", startup_timeout=20)
    return run(options, executor=executor).code


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
