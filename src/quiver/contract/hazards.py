"""Hostile text that a change brings into a tool: what `quiver lint`'s SEC rules flag, on the new side of every
changed text.

The detectors are lint's (`lint/support/injection.py`); contract may not import lint, so the caller passes
them in as a `TextScan` (`commands/diff.py` does). The texts compared are the ones lint scans: `title`,
`description`, `annotations.title`, and every `description`, `title` and string `default` inside the input
and output schemas, each by its path. A hazard counts when the old text at that path did not hold it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence

from quiver.model import JSON

Hazard = tuple[str, str]  # (kind, phrase): a kind of KINDS and the text that matched
TextScan = Callable[[str], Sequence[Hazard]]

# kind -> (what the message says, the lint rule that reports the same text)
KINDS: Mapping[str, tuple[str, str]] = {
    "markup": ("instruction markup", "SEC001"),
    "override": ("an instruction to override or hide instructions", "SEC002"),
    "credentials": ("a request for secrets", "SEC003"),
    "redirect": ("an instruction about other tools or their data", "SEC004"),
    "exfiltration": ("a URL template that can carry data out", "SEC005"),
    "invisible": ("invisible characters", "SEC006"),
}
_TEXT_KEYS = ("description", "title", "default")
_DATA_KEYS = frozenset({"const", "enum", "examples", "example", "default"})
_MAX_PHRASE = 80


def introduced(
    old: Mapping[str, JSON], new: Mapping[str, JSON], scan: TextScan
) -> Iterator[tuple[tuple[str, ...], str, str]]:
    """(path, kind, phrase) for each hazard of a changed text of `new` that the same text of `old` lacked; the
    path is the text's JSON pointer in the Tool object (`("inputSchema", "properties", "q", "description")`)."""
    before = texts(old)
    for path, text in texts(new).items():
        previous = before.get(path)
        if previous == text:
            continue
        known = {kind for kind, _ in scan(previous)} if previous else set()
        reported: set[str] = set()
        for kind, phrase in scan(text):
            if kind in KINDS and kind not in known and kind not in reported:
                reported.add(kind)
                yield path, kind, _shown(phrase)


def texts(tool: Mapping[str, JSON]) -> dict[tuple[str, ...], str]:
    """{pointer: text} of every model-facing text of a tool (`("inputSchema", "properties", "q", "description")`)."""
    out: dict[tuple[str, ...], str] = {}
    for key in ("title", "description"):
        if isinstance(tool.get(key), str) and tool[key]:
            out[(key,)] = str(tool[key])
    annotations = tool.get("annotations")
    if isinstance(annotations, dict) and isinstance(annotations.get("title"), str) and annotations["title"]:
        out[("annotations", "title")] = annotations["title"]
    for key in ("inputSchema", "outputSchema"):
        for path, text in _schema_texts(tool.get(key), (key,)):
            out.setdefault(path, text)
    return out


def _schema_texts(node: JSON, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], str]]:
    if isinstance(node, list):
        for index, item in enumerate(node):
            yield from _schema_texts(item, (*path, str(index)))
        return
    if not isinstance(node, dict):
        return
    for key in _TEXT_KEYS:
        value = node.get(key)
        if isinstance(value, str) and value:
            yield (*path, key), value
    for key, value in node.items():
        if key not in _DATA_KEYS and key not in _TEXT_KEYS and isinstance(value, (dict, list)):
            yield from _schema_texts(value, (*path, key))


def _shown(text: str) -> str:
    """A JSON string literal, every non-ASCII and control character escaped (what hides in the text shows),
    cut short."""
    shown = json.dumps(text, ensure_ascii=True)
    return shown if len(shown) <= _MAX_PHRASE else shown[: _MAX_PHRASE - 4] + '..."'
