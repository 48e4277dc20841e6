"""Words for the routing rules: terms with a light stem, the difference between two texts, name meanings.

Pure. The search index has its own analysis (`quiver.search`); these helpers only explain its verdicts in
words a person can act on: which words one description has that the other lacks, which terms a server's
tools use, and whether two tool names mean the same thing (`search_issues` and `find_issue`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator, Sequence

from quiver.lint.support.words import STOP_WORDS, words

# Words that say nothing about what a server or a tool works on: MCP boilerplate, marketing, filler.
_GENERIC_TEXT = """
    about access accessing after again all allow allowed allows also an any api apis app application applications
    assist assistant assistants available based basic be been being between both bridge built but can capabilities
    capability claude client clients complete comprehensive connect connects context could current cursor data
    default detail detailed details directly do does done e each ease easy eg either enable enables enabling entire
    etc every example exist exists fast feature features following free full fully function functions g general
    generic get give given gives good has have help helper helpers here how i ie if implement implementation
    implemented implementing implements include includes including info information integrate integration interact
    interacting interaction interface internal just language large let lets like llm llms make many may mcp me misc
    miscellaneous model models more most must my need needs new no not note now object official one only optional
    optionally other our own perform platform please powerful project protocol provide provided provides providing
    really result results return returned returns seamless seamlessly server servers service services set should
    simple so some specific specified standard standardized stuff such support supported supports system than them
    then there these they thing things those thus toolkit tools true type typescript unofficial up use used useful
    uses using utilities utility value values various version very want was way we well were what when where whether
    which while who will within without work works would yes you your
"""
GENERIC = frozenset(_GENERIC_TEXT.split()) | STOP_WORDS

# Name words that mean the same action; a name's meaning maps each word to its group's first word.
_SYNONYM_GROUPS: tuple[tuple[str, ...], ...] = (
    ("get", "fetch", "retrieve", "read", "load", "obtain", "lookup"),
    ("list", "enumerate", "ls"),
    ("search", "find", "query", "locate", "seek", "lookup"),
    ("create", "add", "new", "make", "insert"),
    ("delete", "remove", "destroy", "drop", "erase", "rm", "del"),
    ("update", "edit", "modify", "patch", "change", "alter"),
    ("run", "execute", "exec", "invoke", "trigger"),
    ("show", "display", "view", "print"),
    ("write", "save", "store", "put"),
)
_TEXT_WORD = re.compile(r"[^\W_]+")  # prose words as written: `GitHub` stays one word, `read_file` is two
_UNSPACED = "[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff]"  # scripts written without spaces (compiled on first use)
SYNONYMS: dict[str, str] = {}
for _group in _SYNONYM_GROUPS:
    for _word in _group:
        SYNONYMS.setdefault(_word, _group[0])

# Name words that set two otherwise equal names apart by meaning: `get_alert` / `list_alerts`,
# `mouse_down` / `mouse_up`. Two tools whose names differ by one such pair are not near-duplicates.
_CONTRAST_PAIRS = """
    get:list get:set get:search list:search create:delete create:update update:delete read:write get:write
    open:close start:stop up:down enable:disable lock:unlock show:hide push:pull upload:download import:export
    follow:unfollow star:unstar subscribe:unsubscribe next:previous back:forward first:last min:max in:out
    before:after begin:end add:delete allow:deny approve:reject archive:unarchive pin:unpin mute:unmute
    input:output request:response send:receive encode:decode encrypt:decrypt zoom:pan left:right
"""


def canonical(term: str) -> str:
    """A stemmed word, synonyms folded: `retriev` -> `get`, `edit` -> `updat`."""
    return _SYNONYM_STEMS.get(term, term)


@functools.lru_cache(maxsize=65_536)  # pure; a fleet's descriptions and names repeat their words
def stem(word: str) -> str:
    """Plural, -ion, -ing, -ed and a final e off: `repositories` ~ `repository`, `creating` ~ `creation` ~ `create`."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("sses", "xes", "ches", "shes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if word.endswith("ion") and len(word) >= 7:
        word = word[:-3]  # extraction -> extract, creation -> creat(e)
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]  # running -> run, mapped -> map
            break
    if word.endswith("e") and len(word) > 4:
        word = word[:-1]
    return word


_SYNONYM_STEMS = {stem(word): stem(group) for word, group in SYNONYMS.items()}
CONTRASTS = frozenset(frozenset(canonical(stem(w)) for w in pair.split(":")) for pair in _CONTRAST_PAIRS.split())
_CONTRAST_WORDS = frozenset(w for pair in CONTRASTS for w in pair)
ACTIONS = frozenset(_SYNONYM_STEMS.values())  # the action words' stems, synonyms folded: get, list, create, ...
_READS = frozenset(canonical(stem(w)) for w in ("get", "list", "search", "show"))
_WRITES = frozenset(canonical(stem(w)) for w in ("create", "update", "delete", "write", "run"))
_NEGATIONS = ("un", "non", "not")


def terms(text: str) -> Iterator[tuple[str, str]]:
    """(stem, word as written) for each content word of `text`, in order; generic words and digits left out."""
    yield from _terms(text)


@functools.lru_cache(maxsize=16_384)  # the texts of a run recur: one description is compared with many
def _terms(text: str) -> tuple[tuple[str, str], ...]:
    out = []
    for match in _TEXT_WORD.finditer(text):
        word = match.group().lower()
        if len(word) < 2 or word.isdigit() or word in GENERIC:
            continue
        term = stem(word)
        if term not in GENERIC:
            out.append((term, word))
    return tuple(out)


def name_terms(name: str) -> Iterator[tuple[str, str]]:
    """(stem, word) for the content words of an identifier: `listPullRequests` -> list, pull, request."""
    for word in words(name):
        term = stem(word)
        if len(word) >= 2 and not word.isdigit() and word not in GENERIC and term not in GENERIC:
            yield term, word


def spaced(term: str) -> bool:
    """Whether a term is a word of a script written with spaces: a CJK run is a phrase, not a word."""
    return term.isascii() or re.search(_UNSPACED, term) is None


@functools.lru_cache(maxsize=16_384)
def term_set(text: str) -> frozenset[str]:
    return frozenset(t for t, _ in _terms(text))


def only_in(text: str, other: frozenset[str], limit: int = 4) -> list[str]:
    """Words of `text` (as written, first use, in order) whose stem `other` lacks: what sets it apart."""
    out: list[str] = []
    seen: set[str] = set()
    for term, word in terms(text):
        if term in other or term in seen:
            continue
        seen.add(term)
        out.append(word)
        if len(out) == limit:
            break
    return out


def difference(name_a: str, text_a: str, name_b: str, text_b: str) -> str:
    """A hint clause naming what each text says that the other does not, e.g.
    "`git_create_branch` alone says `optional`, `base`; `create_branch` alone says `github`, `repository`"."""
    extra_a, extra_b = _extras(text_a, text_b)
    if not extra_a and not extra_b:
        return "the two descriptions use the same words"
    parts = []
    for name, extra in ((name_a, extra_a), (name_b, extra_b)):
        if extra:
            parts.append(f"`{name}` alone says {', '.join(f'`{w}`' for w in extra)}")
        else:
            parts.append(f"`{name}` says nothing the other does not")
    return "; ".join(parts)


@functools.lru_cache(maxsize=16_384)  # a fleet's clones repeat the same pair of texts under other names
def _extras(text_a: str, text_b: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return tuple(only_in(text_a, term_set(text_b))), tuple(only_in(text_b, term_set(text_a)))


def name_words(name: str, drop: frozenset[str] = frozenset()) -> list[str]:
    """Stemmed words of a tool name without filler and without `drop` (server name words, a shared prefix)."""
    out = [stem(w) for w in words(name) if w not in STOP_WORDS]
    kept = [w for w in out if w not in drop]
    return kept or out


def said(name: str, drop: frozenset[str] = frozenset()) -> str:
    """The words of a tool name that carry its meaning, as written: `git_create_branch` -> `create branch`."""
    out = [w for w in words(name) if w not in STOP_WORDS]
    kept = [w for w in out if stem(w) not in drop]
    return " ".join(kept or out)


def meaning(name: str, drop: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """What a tool name says, order and synonyms aside: `search_issues`, `findIssue` and `issue-query` agree."""
    return tuple(sorted({canonical(w) for w in name_words(name, drop)}))


def contrasting(a: Sequence[str], b: Sequence[str]) -> bool:
    """Whether two meanings differ only by one contrasting pair of words (`get`/`list`, `up`/`down`), or by a
    reading action against a writing one (`retrieve_page` / `update_page`: a model that wants to change a page
    does not pick the tool that reads it)."""
    only_a, only_b = set(a) - set(b), set(b) - set(a)
    if len(only_a) != 1 or len(only_b) != 1:
        return False
    pair = frozenset((*only_a, *only_b))
    return pair in CONTRASTS or (len(pair & _READS) == 1 and len(pair & _WRITES) == 1)


def negated(a: Sequence[str], b: Sequence[str]) -> bool:
    """Whether two meanings differ only by a negated word (`diff_staged` / `diff_unstaged`): one prefix is all that
    tells them apart, and a model skimming names misses it. Opposite actions (`star`/`unstar`, `lock`/`unlock`)
    say which is which and do not count."""
    only_a, only_b = set(a) - set(b), set(b) - set(a)
    if len(only_a) != 1 or len(only_b) != 1:
        return False
    (x,), (y,) = sorted((only_a, only_b), key=lambda s: len(next(iter(s))))
    base = next((y[len(p) :] for p in _NEGATIONS if y == p + x), None)
    return base is not None and base not in _CONTRAST_WORDS and base not in ACTIONS


def shared_prefix(names: Iterable[str]) -> frozenset[str]:
    """The first word every name starts with (`browser` of Playwright's tools, `API` of Notion's), stemmed: a
    namespace, not a meaning. An action word (`get_...` everywhere) is a meaning and is kept."""
    firsts = {stem(found[0]) if (found := words(name)) else "" for name in names}
    if len(firsts) != 1:
        return frozenset()
    first = firsts.pop()
    if not first or first in _SYNONYM_STEMS or first in _CONTRAST_WORDS:
        return frozenset()
    return frozenset((first,))
