"""Consolidations: a removed tool whose name or parameters reappear in another tool ("folded into X").

Evidence, strongest first, for a removed tool R and a tool T of the new catalog:
1. R's whole name is a value T's input lists (an `enum`/`const` value: `method: list_workflows`): any T,
   added by the change or not (a tool that was there before takes a removed one only this way).
2. T was added by the change and shares a word with R that is not a verb, and R's name is a word of T's texts
   (its description or a property's), or what is left of it once the shared words are taken out
   (`get_pull_request_files` against `pull_request_read` leaves `get_files`) is a listed value or text word
   of T, or a listed value of T names the same things under another verb (`list_sub_issues` and
   `get_sub_issues` in `issue_read`). Plurals count as singulars.
3. T was added, shares a word with R that is not a verb, and R's parameters (two at least) are all T's.
The best T (strongest evidence, then the most similar name) takes R; a tool with no evidence stays removed.
Pure; names are compared after `normalise_name`.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Callable, Collection, Iterator, Mapping

from quiver.model import JSON

Tool = Mapping[str, JSON]
NameFn = Callable[[str], str]
# Words that say what a tool does rather than what it works on: sharing one is no evidence.
_VERBS = frozenset(
    {"get", "list", "create", "update", "delete", "read", "write", "add", "remove", "set", "search", "run", "find"}
)
_WORD = re.compile(r"[A-Za-z0-9_]+")
_LISTING = frozenset({"enum", "const"})
_DATA = frozenset({"enum", "const", "default", "examples"})


def match_folds(
    removed: Mapping[str, Tool], catalog: Mapping[str, Tool], added: Collection[str], *, normalise: NameFn
) -> dict[str, tuple[str, str]]:
    """{removed tool: (the tool of `catalog` it was folded into, how to call it for the old behaviour)}."""
    if not removed:
        return {}
    views = {name: _View(name, tool, normalise) for name, tool in catalog.items()}
    out: dict[str, tuple[str, str]] = {}
    for name in sorted(removed):
        norm = normalise(name)
        words, params = norm.split("_"), _properties(removed[name].get("inputSchema"))
        best: tuple[int, float, str] | None = None
        for target, view in sorted(views.items()):
            level = view.evidence(norm, words, params, added=target in added)
            if level and (best is None or (level, _ratio(norm, view.norm)) > best[:2]):
                best = (level, _ratio(norm, view.norm), target)
        if best is not None:
            out[name] = (best[2], views[best[2]].how(norm, words))
    return out


class _View:
    """What of one candidate tool the evidence looks at: its name words, listed values, text words, parameters.
    Each part is read on first use (most candidates are dismissed by their listed values alone)."""

    def __init__(self, name: str, tool: Tool, normalise: NameFn) -> None:
        self.norm = normalise(name)
        self.words = frozenset(self.norm.split("_"))
        self.stems = _stems(self.norm.split("_"))
        self._tool, self._normalise = tool, normalise

    @functools.cached_property
    def values(self) -> frozenset[str]:
        return frozenset(self._normalise(v) for v in _listed(self._tool.get("inputSchema")))

    @functools.cached_property
    def selectors(self) -> dict[str, tuple[str, str]]:
        """A listed value -> the top-level property whose enum or const lists it."""
        schema = self._tool.get("inputSchema")
        props = schema.get("properties") if isinstance(schema, dict) else None
        return {
            self._normalise(value): (str(prop), value)
            for prop, sub in (props.items() if isinstance(props, dict) else ())
            for value in _listed(sub)
        }

    @functools.cached_property
    def text_words(self) -> frozenset[str]:
        texts = [self._tool.get("description"), *_descriptions(self._tool.get("inputSchema"))]
        words = {w for text in texts if isinstance(text, str) for w in _WORD.findall(text)}
        return frozenset(self._normalise(w) for w in words)

    @functools.cached_property
    def params(self) -> frozenset[str]:
        return _properties(self._tool.get("inputSchema"))

    def evidence(self, name: str, words: list[str], params: frozenset[str], *, added: bool) -> int:
        if name in self.values:
            return 3
        if not added or not (_stems(words) & self.stems) - _VERBS:
            return 0  # a tool that was there before takes a removed one only by listing its name
        rest = "_".join(w for w in words if _stem(w) not in self.stems)
        nouns = _stems(words) - _VERBS - self.stems
        if ("_" in name and name in self.text_words) or (rest and (rest in self.values or rest in self.text_words)):
            return 2
        if nouns and any(nouns == _stems(v.split("_")) - _VERBS - self.stems for v in self.values):
            return 2  # the same things under another verb: `list_sub_issues` as `get_sub_issues`
        return 1 if len(params) >= 2 and params <= self.params else 0

    def how(self, name: str, words: list[str]) -> str:
        """How to call the tool for the removed one's behaviour: the argument that selects it, if one does."""
        rest = "_".join(w for w in words if _stem(w) not in self.stems)
        nouns = _stems(words) - _VERBS - self.stems
        same = [v for v in self.selectors if nouns and nouns == _stems(v.split("_")) - _VERBS - self.stems]
        for key in (name, rest, *same):
            if key in self.selectors:
                prop, value = self.selectors[key]
                return f'with `{prop}` set to "{value}"'
        return "see its description for the arguments"


def _stem(word: str) -> str:
    """`issues` -> `issue`: plural and singular names the same thing."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _stems(words: Collection[str]) -> frozenset[str]:
    return frozenset(_stem(w) for w in words)


def _keyword_values(schema: JSON, keywords: frozenset[str]) -> Iterator[tuple[str, JSON]]:
    """(keyword, value) for each of `keywords` anywhere in the schema (data values are not walked into)."""
    if isinstance(schema, list):
        for item in schema:
            yield from _keyword_values(item, keywords)
    elif isinstance(schema, dict):
        for key, value in schema.items():
            if key in keywords:
                yield key, value
            elif key not in _DATA:
                yield from _keyword_values(value, keywords)


def _listed(schema: JSON) -> Iterator[str]:
    """Every string an `enum` or `const` of the schema lists, at any depth."""
    for key, value in _keyword_values(schema, _LISTING):
        values = value if key == "enum" and isinstance(value, list) else [value]
        yield from (v for v in values if isinstance(v, str))


def _descriptions(schema: JSON) -> Iterator[JSON]:
    return (value for _, value in _keyword_values(schema, frozenset({"description"})))


def _properties(schema: JSON) -> frozenset[str]:
    props = schema.get("properties") if isinstance(schema, dict) else None
    return frozenset(props) if isinstance(props, dict) else frozenset()


def _ratio(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()
