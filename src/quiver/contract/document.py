"""One JSON Schema document: its dialect (`$schema` decides), its `$id`s and anchors, and `$ref` lookup.

Local references (`#/...`, `#anchor`) and references relative to an `$id` of the document resolve; any other
reference is remote (`RemoteRef`): never fetched, and reported by the diff where it is used.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from urllib.parse import unquote, urljoin

from quiver.contract._json_type import json_type
from quiver.contract._wellformed import check
from quiver.errors import InputError
from quiver.model import JSON, canonical_json

_DATA_KEYS = frozenset({"const", "enum", "default", "examples", "example"})
_NAME_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"})
_OLD_DRAFTS = ("draft-04", "draft-06", "draft-07")
REF_HINT = "define the target under `$defs` in the same schema; remote references are not followed"


class RemoteRef(InputError):
    """A `$ref` to a document other than this one: never fetched, reported where it is used."""


@dataclass(frozen=True, slots=True)
class Document:
    """One schema document: the root that `#...` and `$id`-relative references resolve against."""

    root: JSON
    anchors: Mapping[str, JSON] = field(default_factory=dict)
    siblings_apply: bool = True  # 2019-09+: keywords beside `$ref` apply; draft-07 and older: ignored
    dialect: str = "2020-12"
    base: str = ""  # the root's `$id` without fragment: the base URI of relative references
    ids: Mapping[str, JSON] = field(default_factory=dict)  # absolute `$id` (no fragment) -> node
    ref_bases: Mapping[int, str] = field(default_factory=dict)  # id() of a `$ref` node -> its base URI

    @classmethod
    def load(cls, root: JSON) -> Document:
        """Check the document and every local `$ref` in it; raise InputError when one does not resolve.

        `$schema` decides the dialect (2020-12 when absent or unknown). A remote `$ref` is kept: the walk
        reports the part it guards as not compared."""
        if not isinstance(root, (dict, bool)):
            raise InputError(
                f"schema must be a JSON object or boolean, not {json_type(root)}",
                hint='an MCP `inputSchema` is an object such as {"type": "object"}',
            )
        dialect = dialect_of(root)
        id_key = "id" if dialect == "draft-04" else "$id"
        anchors: dict[str, JSON] = {}
        ids: dict[str, JSON] = {}
        base = ""
        if isinstance(root, dict) and isinstance(root.get(id_key), str):
            base = str(root[id_key]).partition("#")[0]
        check(root, dialect)
        ref_bases: dict[int, str] = {}  # a `$ref` inside a resource with its own `$id` resolves against it
        for node, here in _walk(root, base, id_key):
            anchor = node.get("$anchor")
            if isinstance(anchor, str):
                anchors[anchor] = node
            ident = node.get(id_key)
            if isinstance(ident, str):
                if ident.startswith("#") and dialect in _OLD_DRAFTS:  # draft-06/07 plain-name fragment
                    anchors[ident[1:]] = node
                else:
                    ids[here] = node
            if "$ref" in node and here != base:
                ref_bases[id(node)] = here
        doc = cls(root, anchors, dialect in ("2019-09", "2020-12"), dialect, base, ids, ref_bases)
        for node, _ in _walk(root, base, id_key):
            if "$ref" in node:
                try:
                    doc.lookup(node["$ref"], doc.base_of(node))
                except RemoteRef:
                    continue
        return doc

    def base_of(self, node: Mapping[str, JSON]) -> str:
        """The base URI the `$ref` of `node` resolves against: its enclosing `$id`, else the root's."""
        return self.ref_bases.get(id(node), self.base)

    def lookup(self, ref: JSON, base: str | None = None) -> JSON:
        """The node a `$ref` points to (local, or relative to an `$id` of this document); RemoteRef else."""
        if not isinstance(ref, str):
            raise InputError(f"`$ref` {_show(ref)} is not a string", hint=REF_HINT)
        base = self.base if base is None else base
        absolute = urljoin(base, ref) if base else ref
        target, _, fragment = absolute.partition("#")
        if target in self.ids:
            node = self.ids[target]
        elif target in ("", self.base):
            node = self.root
        else:
            raise RemoteRef(f"`$ref` {_show(ref)} is a remote reference", hint=REF_HINT)
        if fragment and not fragment.startswith("/"):
            if fragment in self.anchors:
                return self.anchors[fragment]
            raise InputError(f"`$ref` {_show(ref)} names no `$anchor` in the schema", hint=REF_HINT)
        for raw in fragment.split("/")[1:]:
            token = unquote(raw).replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and token in node:
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                raise InputError(f"`$ref` {_show(ref)} does not resolve in the schema", hint=REF_HINT)
        if not isinstance(node, (dict, bool)):
            raise InputError(f"`$ref` {_show(ref)} points to a {json_type(node)}, not a schema", hint=REF_HINT)
        return node


def dialect_of(root: JSON) -> str:
    """`draft-04`, `draft-06`, `draft-07`, `2019-09` or `2020-12` (the MCP default, also for unknown URIs)."""
    named = str(root.get("$schema", "")) if isinstance(root, dict) else ""
    for dialect in (*_OLD_DRAFTS, "2019-09"):
        if dialect in named:
            return dialect
    return "2020-12"


def _walk(root: JSON, base: str, id_key: str) -> Iterator[tuple[dict[str, JSON], str]]:
    """Every schema object in the document with the base URI in force there (the nearest `$id`).

    Values of data keywords (`const`, `enum`, `default`, `examples`) are skipped; the values of name maps
    (`properties`, `$defs`...) are schemas whatever their key is called.
    """
    stack: list[tuple[JSON, bool, str]] = [(root, False, base)]
    while stack:
        current, is_map, here = stack.pop()
        if isinstance(current, list):
            stack.extend((item, False, here) for item in reversed(current))
        elif isinstance(current, dict) and is_map:
            stack.extend((value, False, here) for value in reversed(current.values()))
        elif isinstance(current, dict):
            ident = current.get(id_key)
            if isinstance(ident, str) and not ident.startswith("#"):
                here = urljoin(here, ident).partition("#")[0]
            yield current, here
            for key, value in reversed(current.items()):
                if key not in _DATA_KEYS:
                    stack.append((value, key in _NAME_MAPS, here))


def _show(ref: JSON) -> str:
    return f"`{ref}`" if isinstance(ref, str) else canonical_json(ref)[:60]
