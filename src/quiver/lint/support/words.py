"""Words of tool names and descriptions: splitting, light stemming, verb classes. Pure; shared by tools and security."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

Verb = Literal["destructive", "read"]

DESTRUCTIVE_VERBS = (
    "delete",
    "remove",
    "drop",
    "destroy",
    "purge",
    "kill",
    "wipe",
    "truncate",
    "revoke",
    "terminate",
    "erase",
)
READ_VERBS = ("get", "list", "search", "read", "fetch", "describe", "show", "find", "query")
STOP_WORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "function",
        "given",
        "in",
        "into",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "provided",
        "specified",
        "that",
        "the",
        "this",
        "to",
        "tool",
        "via",
        "with",
    }
)

# camelCase and PascalCase humps, acronyms, digit runs; everything else separates words.
_HUMPS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


_CJK = r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]"  # compiled on first non-ASCII text (2 ms)


def _inflections(verbs: Iterable[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for verb in verbs:
        base = verb[:-1] if verb.endswith("e") else verb
        for form in (verb, f"{verb}s", f"{base}ed", f"{base}ing", f"{verb}es"):
            out[form] = verb
    out["got"] = "get"
    out["found"] = "find"
    out["killed"] = "kill"
    out["dropped"] = "drop"
    out["dropping"] = "drop"
    return out


_DESTRUCTIVE = _inflections(DESTRUCTIVE_VERBS)
_READ = _inflections(READ_VERBS)


def words(text: str) -> list[str]:
    """Lower-case words of a name or sentence: `listPullRequests`, `list_pull-requests` -> list, pull, requests."""
    return [w.lower() for w in _HUMPS.findall(text)]


def stem(word: str) -> str:
    """A deliberately light stem so `gets`/`get` and `issues`/`issue` compare equal."""
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def content_words(text: str) -> set[str]:
    """Stemmed words minus stop words: what a description adds beyond filler."""
    return {stem(w) for w in words(text) if w not in STOP_WORDS}


def word_count(text: str) -> int:
    """Whitespace-separated words; each CJK character counts as one (those scripts use no spaces)."""
    cjk = 0 if text.isascii() else len(re.findall(_CJK, text))
    if not cjk:
        return len(text.split())
    return cjk + len(re.sub(_CJK, " ", text).split())


def display_length(text: str) -> int:
    """Characters, counting a CJK character twice: it carries about as much as two Latin letters."""
    return len(text) if text.isascii() else len(text) + len(re.findall(_CJK, text))


def verb_class(text: str) -> tuple[Verb, str] | None:
    """The action a name or title states in its verb position (first word, else last word).

    A destructive verb anywhere else in the text wins over a read verb in the verb position: in
    `fetch_and_purge` the name does not claim to only read.
    """
    found = words(text)
    if not found:
        return None
    positional: tuple[Verb, str] | None = None
    for word in (found[0], found[-1]):
        if word in _DESTRUCTIVE:
            return "destructive", _DESTRUCTIVE[word]
        if word in _READ and positional is None:
            positional = ("read", _READ[word])
    if positional is not None and any(w in _DESTRUCTIVE for w in found):
        return None
    return positional
