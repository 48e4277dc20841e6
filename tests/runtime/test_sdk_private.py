"""The MCP SDK's private names quiver uses (quiver/mcp_sdk.py): present in the installed SDK, callable exactly
as quiver calls them, and a changed one falls back instead of stopping `serve` (issue 24)."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from quiver import mcp_sdk

SRC = Path(__file__).resolve().parents[2] / "src" / "quiver"


def test_the_installed_sdk_has_the_stream_loops_with_the_parameters_quiver_passes() -> None:
    runner = importlib.import_module(mcp_sdk.RUNNER)
    loops, why = mcp_sdk.loops_of(runner)
    assert why is None and loops is not None
    assert mcp_sdk.stream_loops() is not None
    for name, (positional, keywords) in mcp_sdk.CALLS.items():
        parameters = list(inspect.signature(getattr(runner, name)).parameters.values())
        assert len([p for p in parameters if p.kind is p.POSITIONAL_OR_KEYWORD]) >= positional, name
        named = {p.name for p in parameters if p.kind is p.KEYWORD_ONLY}
        required = {p.name for p in parameters[positional:] if p.default is p.empty and p.kind is p.KEYWORD_ONLY}
        assert set(keywords) <= named, name  # every keyword quiver passes is one the SDK takes
        assert required <= set(keywords), name  # and the SDK requires none quiver leaves out


def test_the_adapter_calls_the_loops_with_exactly_the_arguments_it_checks() -> None:
    # `_stdio.serve` is the one caller: its calls of loops.* pass CALLS' positional count and keywords.
    tree = ast.parse((SRC / "runtime" / "_stdio.py").read_text(encoding="utf-8"))
    attributes = {"has_modern_envelope", "serve_legacy_stream", "serve_modern_stream"}
    seen = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in attributes:
            seen[f"_{node.func.attr}"] = (len(node.args), tuple(k.arg for k in node.keywords))
    assert seen == dict(mcp_sdk.CALLS)


def test_the_sdk_tracing_middleware_is_recognised() -> None:
    from mcp.server import Server

    server: Server[Any] = Server("probe")
    assert any(mcp_sdk.is_sdk_tracing(m) for m in server.middleware)
    assert not mcp_sdk.is_sdk_tracing(object())


def test_a_changed_signature_or_a_missing_name_falls_back_with_the_reason() -> None:
    def has_modern_envelope(params: object) -> bool:
        return False

    async def legacy(server: object, read: object, write: object, *, lifespan_state: object, **kw: object) -> None:
        return None

    async def modern_with_a_new_required_argument(
        server: object, read: object, write: object, *, lifespan_state: object, raise_exceptions: bool, era: str
    ) -> None:
        return None

    async def modern(
        server: object, read: object, write: object, *, lifespan_state: object, raise_exceptions: bool
    ) -> None:
        return None

    ok = SimpleNamespace(
        _has_modern_envelope=has_modern_envelope, _serve_legacy_stream=legacy, _serve_modern_stream=modern
    )
    assert mcp_sdk.loops_of(ok)[1] is None  # **kw takes the keywords quiver passes
    changed = SimpleNamespace(**{**vars(ok), "_serve_modern_stream": modern_with_a_new_required_argument})
    loops, why = mcp_sdk.loops_of(changed)
    assert loops is None and why is not None and "_serve_modern_stream takes" in why and "era" in why
    gone = SimpleNamespace(_has_modern_envelope=has_modern_envelope, _serve_legacy_stream=legacy)
    assert mcp_sdk.loops_of(gone) == (None, "mcp.server.runner._serve_modern_stream is gone")
    renamed_keyword = SimpleNamespace(**{**vars(ok), "_has_modern_envelope": lambda *, params: False})
    assert "_has_modern_envelope takes" in str(mcp_sdk.loops_of(renamed_keyword)[1])


def test_no_module_but_the_adapter_names_a_private_sdk_module_or_name() -> None:
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        if path == SRC / "mcp_sdk.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in ("mcp", "mcp_types"):
                private = [p for p in node.module.split(".") if p.startswith("_")]
                private += [a.name for a in node.names if a.name.startswith("_")]
                if private:
                    offenders.append(f"{path.relative_to(SRC)}:{node.lineno} {node.module}: {private}")
    assert offenders == []


def test_the_private_type_names_the_adapter_imports_for_typing_exist_in_the_installed_sdk() -> None:
    # mcp_sdk.py imports these under TYPE_CHECKING only; a renamed one must fail here, not only in mypy.
    tree = ast.parse((SRC / "mcp_sdk.py").read_text(encoding="utf-8"))
    private = [
        (node.module, alias.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and "._" in f".{node.module}"
        for alias in node.names
    ]
    assert ("mcp.client._transport", "TransportStreams") in private
    for module, name in private:
        assert hasattr(importlib.import_module(module), name), f"{module}.{name}"
