"""Text to terms: identifier splitting, a light English stemmer, stopwords, and query value shapes.

Everything here is pure and deterministic. Documents and queries go through the same `terms()` so that
`createDirectory`, `create_directory`, `create-directory` and "create a directory" meet on the same terms.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import pairwise

_STOPWORDS_TEXT = """
    a about above after again against all also am an and any are as at be because been before being below
    between both but by can could did do does doing done down during each either else etc few for from
    further had has have having he her here hers herself him himself his how i if in into is it its itself
    just let lets like may me might more most must my myself no nor not now of off on once only or other our
    ours ourselves out over own please same shall she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up upon us very was we were what
    when where whether which while who whom whose why will with within without would you your yours yourself
    yourselves e g eg ie via using use used uses want wants need needs needed help kindly thanks thank hey
    hi okay ok tool tools able way something anything thing things
"""
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())

# A few irregular forms that the suffix stemmer cannot reach (general English, not tied to any catalog).
# fmt: off
IRREGULAR = {
    "ran": "run", "running": "run", "wrote": "write", "written": "write", "made": "make", "took": "take",
    "taken": "take", "found": "find", "got": "get", "gotten": "get", "gave": "give", "given": "give",
    "saw": "see", "seen": "see", "went": "go", "gone": "go", "sent": "send", "kept": "keep", "left": "leave",
    "began": "begin", "begun": "begin", "chose": "choose", "chosen": "choose", "drew": "draw",
    "drawn": "draw", "shown": "show", "knew": "know", "known": "know", "built": "build", "bought": "buy",
    "brought": "bring", "thought": "think", "told": "tell", "said": "say", "held": "hold", "led": "lead",
    "lost": "lose", "paid": "pay", "set": "set", "put": "put", "read": "read", "children": "child",
    "people": "person", "men": "man", "women": "woman",
}
# fmt: on
# Words the suffix rules would damage; kept as they are.
_INVARIANT_TEXT = """
    data media news status canvas alias analysis species series process access address class less bus gas
    yes this plus minus sms os ios macos js css
"""
INVARIANT = frozenset(_INVARIANT_TEXT.split())

_VOWELS = frozenset("aeiouy")
_DOUBLES = ("bb", "dd", "ff", "gg", "mm", "nn", "pp", "rr", "tt")
# camelCase and acronyms split (`getHTTPResponse2` -> get HTTP Response 2); a plural acronym stays whole
# (`PRs`, `URLs`, `IDs`: the acronym, not `p` + `rs`); CJK runs kept whole
_ASCII_WORDS = r"[A-Z]{2,}s(?![a-z])|[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+"
_WORD_RE = re.compile(_ASCII_WORDS)  # ASCII text: the CJK alternative can never match, and costs 1 ms to compile
_WORDS_ANY = _ASCII_WORDS + r"|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]+"  # compiled on first non-ASCII text
_URL_RE = re.compile(
    r"^(?:[a-z][a-z0-9+.-]*://\S+|www\.\S+|[\w-]+(?:\.[\w-]+)*\.(?:com|org|net|io|dev|ai|gov|edu|co|app"
    r"|info|me|us|uk|de|cn|jp)(?:[/:?#]\S*)?)$",
    re.IGNORECASE,
)
_EMAIL_RE = re.compile(r"^[\w.+-]+@[\w-]+\.[\w.-]+$")
# `owner/repo` (a code host's repository slug), not a path: one slash, no leading `.`, `/` or `~`, a first
# part that is not a usual folder name, and a last part without a file extension (`next.js` style allowed)
_SLUG_RE = re.compile(r"^[A-Za-z0-9][\w-]*/[A-Za-z0-9][\w-]*(?:\.js)?$")
_FOLDERS_TEXT = """
    src lib libs app apps bin build dist docs doc test tests spec scripts tmp var etc home usr opt data config
    configs assets static public images img pkg cmd internal vendor node_modules examples
"""
_FOLDERS = frozenset(_FOLDERS_TEXT.split())
_PATH_RE = re.compile(r"^(?:~|\.{1,2})?[/\\]\S*|^\S+[/\\]\S*$")
_FILE_RE = re.compile(r"(?:^|[/\\])[\w.-]*\w\.[A-Za-z][A-Za-z0-9]{0,4}$|(?:^|[/\\])\.[a-z]\w*$")
_SELECTOR_RE = re.compile(
    r"^(?:#[A-Za-z][\w-]*|\.[A-Za-z]\w*-[\w-]*|[a-z][\w-]*\[[^\]]+\]?|(?:div|span|input|button|a|form|li|ul|ol"
    r"|p|img|section|nav|table|tr|td|select|textarea|label|h[1-6]|header|footer|main|article)[#.][\w-]+)$"
)
_QUOTED_RE = re.compile(r"\"([^\"]*)\"|'([^']{2,})'(?!\w)|`([^`]*)`|“([^”]*)”")
CACHE_LIMIT = 200_000
_stem_cache: dict[str, str] = {}
_term_cache: dict[str, str] = {}  # word -> stem, "" for a stopword


def _has_vowel(word: str) -> bool:
    return any(c in _VOWELS for c in word)


def _stem(word: str) -> str:
    """Porter-style step 1 (plurals, -ed, -ing) plus -y -> -i and a few derivational endings."""
    if len(word) <= 3 or word.isdigit():
        return word
    if word.endswith("sses"):
        word = word[:-2]
    elif word.endswith(("ies", "ied")):
        word = word[:-3] + ("i" if len(word) > 4 else "ie")
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")) and _has_vowel(word[:-2]):
        word = word[:-1]
    for suffix in ("ingly", "edly", "ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            if not _has_vowel(base):
                break
            if base.endswith(("at", "bl", "iz", "ut")):
                base += "e"
            elif base.endswith(_DOUBLES):
                base = base[:-1]
            elif len(base) == 3 and base[0] not in _VOWELS and base[1] in _VOWELS and base[2] not in "aeiouwxy":
                base += "e"
            word = base
            break
    for suffix, repl in (("ization", "ize"), ("ational", "ate"), ("ation", "ate"), ("ness", ""), ("ment", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            word = word[: -len(suffix)] + repl
            break
    if word.endswith("e") and len(word) > 4:
        word = word[:-1]
    if word.endswith("y") and len(word) > 3 and word[-2] not in _VOWELS:
        word = word[:-1] + "i"
    return word


def inflected(word: str) -> bool:
    """Whether stemming `word` strips a verb ending (-ed, -ing), which can turn it into another word class
    (`filed` -> `file`, `dropped` -> `drop`): the query gives such a stem less weight than the word said."""
    return word.endswith(("ed", "ing")) and word not in INVARIANT and stem(word) != word and len(word) > 4


def stem(word: str) -> str:
    """Stem one lower-case word; memoised, since vocabularies are small and repetitive."""
    got = _stem_cache.get(word)
    if got is None:
        got = word if word in INVARIANT else _stem(IRREGULAR.get(word, word))
        if len(_stem_cache) < CACHE_LIMIT:
            _stem_cache[word] = got
    return got


def _cjk_terms(run: str) -> Iterator[str]:
    if len(run) == 1:
        yield run
    for i in range(len(run) - 1):
        yield run[i : i + 2]


def _acronym(word: str) -> str:
    """`PRs` -> `pr`; other words lower-cased."""
    if len(word) > 2 and word[-1] == "s" and word[-2].isupper():
        return word[:-1].lower()
    return word.lower()


def words(text: str) -> list[str]:
    """Lower-case words of `text`: identifiers split (`localStorage` -> local, storage), CJK as bigrams."""
    if not text.isascii():
        found = re.findall(_WORDS_ANY, text)
        out: list[str] = []
        for w in found:
            if w[0] > "\x7f":
                out.extend(_cjk_terms(w))
            else:
                out.append(_acronym(w))
        return out
    return [_acronym(w) for w in _WORD_RE.findall(text)]


def terms(text: str) -> list[str]:
    """Index terms of `text`: split identifiers, drop stopwords, stem."""
    cache = _term_cache
    found = [cache[w] if w in cache else _term(w) for w in words(text)]
    return [t for t in found if t]


def _term(word: str) -> str:
    got = "" if word in STOPWORDS else stem(word)
    if len(_term_cache) < CACHE_LIMIT:
        _term_cache[word] = got
    return got


def name_terms(name: str) -> list[str]:
    """Terms of a tool name plus each pair of adjacent words joined (`create_directory` -> createdirectori),
    so a query that says the two words together outranks one that only mentions both."""
    parts = words(name)
    joined = [stem(a + b) for a, b in pairwise(parts) if a not in STOPWORDS and b not in STOPWORDS]
    return [stem(w) for w in parts if w not in STOPWORDS] + joined


# an example value in a parameter's description: "(e.g., 'America/New_York')", "e.g. 'Asia/Tokyo'", or a quoted
# literal; it shows a format, not what the tool does, so a request naming that value is not asking for it
_EXAMPLE_RE = re.compile(
    r"\((?:e\.g\.|eg|for example|such as|like)[^)]*\)|(?:e\.g\.|for example|such as),?\s*(?:'[^']*'|\"[^\"]*\"|`[^`]*`)"
    r"(?:,?\s*(?:or|and)?\s*(?:'[^']*'|\"[^\"]*\"|`[^`]*`))*|'[^'\s]*[/_:.][^'\s]*'",
    re.IGNORECASE,
)


def without_examples(text: str) -> str:
    """`text` without the example values it shows (`_EXAMPLE_RE`): for indexing parameter descriptions."""
    return _EXAMPLE_RE.sub(" ", text)


def query_chunks(query: str) -> list[tuple[str, str, str | None]]:
    """Split a query into (text, kind, shape) chunks; kind is `words`, `quoted` or `value`.

    Literal values (quoted strings, URLs, file paths, e-mail addresses) say little about which tool to
    use, but their shape does: a URL asks for a tool that takes a URL. Their text keeps a low weight and
    the shape is reported so the caller can add it as a term.
    """
    chunks: list[tuple[str, str, str | None]] = []
    pos = 0
    for match in _QUOTED_RE.finditer(query):
        chunks.extend(_shaped(query[pos : match.start()]))
        chunks.append((next(g for g in match.groups() if g is not None), "quoted", None))
        pos = match.end()
    chunks.extend(_shaped(query[pos:]))
    return chunks


def _shaped(text: str) -> Iterator[tuple[str, str, str | None]]:
    plain: list[str] = []
    for token in text.split():
        bare = token.strip(",;:!?()[]{}<>\"'")
        if bare.endswith("."):
            bare = bare[:-1]
        shape: str | None = None
        if _EMAIL_RE.match(bare):
            shape = "email"
        elif _SLUG_RE.match(bare) and bare.split("/", 1)[0].lower() not in _FOLDERS:
            shape = "repository"
        elif _URL_RE.match(bare):
            shape = "url"
        elif _SELECTOR_RE.match(bare):
            shape = "selector"
        elif len(bare) > 2 and _FILE_RE.search(bare) and not bare.replace(".", "").isdigit():
            shape = "file"
        elif len(bare) > 2 and _PATH_RE.match(bare):
            shape = "path"
        if shape is None:
            plain.append(token)
            continue
        if plain:
            yield " ".join(plain), "words", None
            plain = []
        yield bare, "value", shape
    if plain:
        yield " ".join(plain), "words", None
