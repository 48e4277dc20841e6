"""What a request asks to do, what a tool does, and how specific a tool's name is beyond the request.

Three general signals the word and embedding scores miss:

- **Action class.** A request's leading verb says whether it makes, reads, finds, changes, removes,
  converts or runs something ("open an issue", "remember that ...": make; "what time is it": read). A
  tool's name says the same with its verb (`issue_write`, `create_entities`, `search_issues`). A tool whose
  class agrees with the request's gains; one whose class contradicts it loses (reading, finding and
  converting are neighbours: none gains or loses against another). Synonym groups cannot do this: "open" is a read
  verb in "open the file" and a make verb in "open an issue", and the article tells them apart.
- **Name specificity.** Among tools that match, the one whose name the request covers is the simpler,
  general one: "click" fits `browser_click` wholly and `browser_mouse_click_xy` a third (the request says
  nothing of a mouse or coordinates). Name words every tool of a server shares (`browser`, `git`) and
  the server's own name do not count.
- **Topic phrases** are handled in `_query.py` (`topic_start`): what follows "about", "regarding", a
  request's leading "that" ("remember that ...") or the "for" of "search X for ..." is the content the
  tool works on, not a description of the tool.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from quiver._search import _text

# verb (stemmed) -> action class; general English, not tied to any catalog
_CLASSES_TEXT = {
    "make": "create add new make write save store insert post put upload record remember memorize note register",
    "read": "get read fetch retrieve show view list display describe tell see open",
    "find": "search find query lookup look locate grep discover",
    "change": "update edit modify change patch rename replace assign",
    "remove": "delete remove drop erase destroy purge clear forget unlink trash",
    "convert": "convert transform translate",
    "run": "run execute invoke trigger launch",
}
VERB_CLASS: Mapping[str, str] = {_text.stem(w): c for c, ws in _CLASSES_TEXT.items() for w in ws.split()}
# "open an issue", "file a bug", "log a ticket", "raise an issue": with an indefinite article these make
_MAKE_WITH_ARTICLE = frozenset(("open", "file", "log", "raise", "start"))
_ARTICLES = frozenset(("a", "an", "new"))
# a request that starts with one of these asks for a fact: a read
_QUESTIONS = frozenset(("what", "whats", "which", "who", "whos", "when", "where", "wheres"))
_HOW_MUCH = frozenset(("many", "much", "long", "old", "far"))
# leading words that carry no action ("please", "can you", "i'd like to", "go ahead and")
_FILLERS = frozenset(("go", "ahead", "like", "d", "ll", "s", "now", "just", "quickly"))
# pairs that neither gain nor lose against each other: reading, finding and converting change nothing
NEIGHBOURS = frozenset(frozenset(p) for p in (("read", "find"), ("read", "convert"), ("find", "convert")))


def made_with_article(query: str) -> str | None:
    """The leading verb when it makes something only by its article ("open an issue", "file a bug"): the
    word whose synonyms are then those of "create", not its own ("open" alone reads)."""
    words = [w for w in _text.words(query) if w not in _FILLERS]
    for i, word in enumerate(words):
        if word in _text.STOPWORDS:
            continue
        if word in _MAKE_WITH_ARTICLE and i + 1 < len(words) and words[i + 1] in _ARTICLES:
            return word
        return None
    return None


def query_class(query: str) -> str | None:
    """The action class of the request's leading verb, or None when it has none we know."""
    words = _text.words(query)
    for i, word in enumerate(words):
        if i == 0 and word in _QUESTIONS:
            return "read"
        if word == "how" and i + 1 < len(words) and words[i + 1] in _HOW_MUCH:
            return "read"
        if word in _text.STOPWORDS or word in _FILLERS:
            continue
        if word in _MAKE_WITH_ARTICLE and i + 1 < len(words) and words[i + 1] in _ARTICLES:
            return "make"
        return VERB_CLASS.get(_text.stem(word))
    return None


def tool_class(name: str) -> str | None:
    """The action class of a tool name's verb: its first, second or last word (`get_file`, `issue_write`,
    `sub_issue_write`)."""
    words = _text.words(name)
    for word in words[:2] + words[-1:]:
        found = VERB_CLASS.get(_text.stem(word))
        if found is not None:
            return found
    return None


def agreement(asked: str | None, does: str | None) -> int:
    """+1 when the tool does what the request asks, -1 when it does something else, 0 when unknown or
    neighbouring (reading and finding)."""
    if asked is None or does is None:
        return 0
    if asked == does:
        return 1
    return 0 if frozenset((asked, does)) in NEIGHBOURS else -1


def distinctive_names(servers: Sequence[str], names: Sequence[str]) -> list[frozenset[str]]:
    """Per tool, its name's terms less the server's name and the words most of its server's tools share."""
    by_server: dict[str, list[frozenset[str]]] = {}
    own = [frozenset(_text.terms(n)) for n in names]
    for server, terms in zip(servers, own, strict=True):
        by_server.setdefault(server, []).append(terms)
    common: dict[str, frozenset[str]] = {}
    for server, all_terms in by_server.items():
        counts: dict[str, int] = {}
        for terms in all_terms:
            for t in terms:
                counts[t] = counts.get(t, 0) + 1
        shared = {t for t, c in counts.items() if len(all_terms) >= 3 and c * 2 > len(all_terms)}
        common[server] = frozenset(shared | set(_text.terms(server)))
    return [terms - common[server] for server, terms in zip(servers, own, strict=True)]


def name_cover(name: frozenset[str], asked: Mapping[str, float]) -> float:
    """The weighted share of a tool's distinctive name terms the request says (0 for a name with none)."""
    if not name:
        return 0.0
    return sum(min(1.0, asked.get(t, 0.0)) for t in name) / len(name)
