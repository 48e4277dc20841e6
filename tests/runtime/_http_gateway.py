"""`quiver serve --http 127.0.0.1:0` as a subprocess for a test: started, its URL read from its readiness
line (an event, not a fixed wait), its stderr collected, stopped with SIGTERM and reaped at the end."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

HANG_GUARD_S = 120.0  # only a hang trips it: every wait below is for an event


@dataclass
class HttpGateway:
    url: str = ""
    stderr: list[str] = field(default_factory=list)
    pid: int = 0

    def log(self) -> str:
        return "\n".join(self.stderr)


@asynccontextmanager
async def http_gateway(
    manifest: Path, token: str, env: dict[str, str], cwd: Path, extra: Sequence[str] = (), host: str = "127.0.0.1"
) -> AsyncIterator[HttpGateway]:
    args = [sys.executable, "-m", "quiver", "serve", str(manifest), "--http", f"{host}:0", *extra]
    process = await anyio.open_process(
        args, env={**env, "QUIVER_TOKEN": token}, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL
    )
    gateway = HttpGateway(pid=process.pid)
    assert process.stderr is not None
    lines = _lines(process.stderr)
    try:
        async with anyio.create_task_group() as tg:
            with anyio.fail_after(HANG_GUARD_S):
                async for line in lines:
                    gateway.stderr.append(line)
                    if match := re.search(r"listening on (http\S+)", line):
                        gateway.url = match.group(1)
                        break
            assert gateway.url, gateway.log()
            tg.start_soon(_drain, lines, gateway.stderr)
            yield gateway
            process.terminate()
            with anyio.fail_after(HANG_GUARD_S):
                await process.wait()
    finally:
        if process.returncode is None:
            process.kill()
            with anyio.move_on_after(HANG_GUARD_S, shield=True):
                await process.wait()
        print(gateway.log())


async def _lines(stream: Any) -> AsyncIterator[str]:
    buffer = b""
    async for chunk in stream:
        buffer += chunk
        *complete, buffer = buffer.split(b"\n")
        for line in complete:
            yield line.decode("utf-8", "replace")


async def _drain(lines: AsyncIterator[str], into: list[str]) -> None:
    async for line in lines:
        into.append(line)
