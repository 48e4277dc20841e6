"""Query analysis: a user's sentence -> weighted index terms.

Steps, each optional through `QueryOptions` so the benchmark can measure it alone:
literal values (quotes, URLs, paths, repository slugs, e-mails) are damped and replaced by their shape;
words are split and stemmed like documents (a stem reached by stripping -ed/-ing weighs less than the
word said); split words are joined and joined words are split when the other form is an index term
("file system" / "filesystem"); a word the index does not know, and that is not an English word, is
matched to its nearest index terms (typos); vocabulary groups add near-synonyms at a reduced weight.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from pathlib import Path

from quiver._search import _text
from quiver._search._intent import VERB_CLASS, made_with_article
from quiver._search._vocab import GROUPS

# A literal value's shape -> terms asked for, each its own concept (a file path asks for a path and a file).
SHAPE_TERMS: Mapping[str, tuple[str, ...]] = {
    "url": ("url",),
    "path": ("path",),
    "file": ("path", "file"),
    "email": ("email",),
    "selector": ("element",),
    "repository": (_text.stem("repository"),),
}
MAX_PHRASE = 3
WORDS = Path(__file__).with_name("data") / "english-words.txt.gz"


@dataclass(frozen=True, slots=True)
class QueryOptions:
    """Which query analysis steps run, and the weight of what each adds (a query word itself weighs 1)."""

    shapes: bool = True
    compounds: bool = True
    typos: bool = True
    synonyms: bool = True
    synonym_weight: float = 0.35
    typo_weight: float = 0.8
    shape_weight: float = 0.5  # the term a literal value's shape stands for ("url" for a URL)
    inflection_weight: float = 0.35  # a stem reached by stripping -ed/-ing (`filed` -> `file`)
    value_weight: float = 0.3  # the words inside a literal value (a URL, a path, an e-mail address)
    quoted_weight: float = 0.5  # the words inside quotes
    topics: bool = True  # what follows "about", "search X for", a leading "remember that" is content
    topic_weight: float = 0.5  # the words of such a topic phrase (they do not count for coordination)
    framing: bool = True  # "tell me", "give me": how the request is put, not what it asks (no term)


def _phrase_key(phrase: str) -> tuple[str, ...]:
    return tuple(_text.stem(w) for w in _text.words(phrase))


@cache
def synonyms() -> dict[tuple[str, ...], tuple[str, ...]]:
    """Phrase (stemmed words, stopwords kept) -> expansion terms (stemmed, stopwords dropped); built once."""
    table: dict[tuple[str, ...], set[str]] = {}
    for group in GROUPS:
        members = [(_phrase_key(m), _text.terms(m)) for m in group]
        for key, own in members:
            if not key or not own:
                continue
            bucket = table.setdefault(key, set())
            for _, other in members:
                bucket.update(t for t in other if t not in own)
    return {k: tuple(sorted(v)) for k, v in table.items()}


class _Builder:
    """Collects concepts: one per query word (or value shape), each a map of term -> weight."""

    __slots__ = ("concepts", "vocabulary")

    def __init__(self, vocabulary: Collection[str]) -> None:
        self.vocabulary = vocabulary
        self.concepts: list[tuple[dict[str, float], bool]] = []

    def concept(self, *, primary: bool) -> dict[str, float]:
        terms: dict[str, float] = {}
        self.concepts.append((terms, primary))
        return terms

    def result(self) -> list[Concept]:
        out: list[Concept] = []
        for terms, primary in self.concepts:
            kept = {t: w for t, w in terms.items() if t in self.vocabulary}
            if kept:
                out.append(Concept(kept, primary))
        return out


@dataclass(frozen=True, slots=True)
class Concept:
    """One thing the query asks for: alternative terms with weights; a tool scores its best term."""

    terms: dict[str, float]
    primary: bool  # a word of the request itself (not a literal value): counts for coordination


def _add(weights: dict[str, float], term: str, weight: float) -> None:
    if weight > weights.get(term, 0.0):
        weights[term] = weight


def analyze(
    query: str,
    vocabulary: Collection[str],
    typo_candidates: tuple[str, ...],
    options: QueryOptions,
) -> list[Concept]:
    """The concepts of `query`; only terms in `vocabulary` are kept, and concepts left empty are dropped."""
    out = _Builder(vocabulary)
    known_words = synonyms()
    cut = topic_start(query) if options.topics else None
    made = made_with_article(query) if options.topics else None
    sense: dict[tuple[str, ...], tuple[str, ...]] = {}
    if made is not None:
        sense[(_text.stem(made),)] = (_text.stem("create"),)
    parts = [(query, False)] if cut is None else [(query[:cut], False), (query[cut:], True)]
    chunks = [
        (text, "topic" if topic and kind == "words" else kind, shape)
        for part, topic in parts
        for text, kind, shape in (_text.query_chunks(part) if options.shapes else [(part, "words", None)])
    ]
    weights = {"value": options.value_weight, "quoted": options.quoted_weight, "topic": options.topic_weight}
    for text, kind, shape in chunks:
        if shape is not None:
            for term in SHAPE_TERMS[shape]:
                out.concept(primary=True)[term] = options.shape_weight
        primary = kind == "words"
        chunk_weight = 1.0 if primary else weights[kind]
        said = _text.words(text)
        seq = [(_text.stem(w), w) for w in said]
        framed = _framing(said) if options.framing else ()
        by_term: dict[str, dict[str, float]] = {}
        for at, (term, word) in enumerate(seq):
            if word in _text.STOPWORDS or at in framed:
                continue
            if term not in by_term:
                by_term[term] = out.concept(primary=primary)
            # an inflected word, or a verb said in the sense of another ("file" in "file a bug"), may stand
            # for another word class than its stem does in tool texts
            other_sense = _text.inflected(word) or word == made
            weight = chunk_weight * (options.inflection_weight if other_sense else 1.0)
            _add(by_term[term], term, weight)
        if not primary:
            continue
        content = [(s, w) for s, w in seq if w not in _text.STOPWORDS]
        if options.compounds:
            _compounds([w for _, w in seq if w not in _text.STOPWORDS], out)
        if options.typos and typo_candidates:
            _typos(content, known_words, typo_candidates, options, by_term, vocabulary)
        if options.synonyms:
            _expand(seq, known_words, options.synonym_weight, by_term, sense)
    return out.result()


# Verbs that, before "me" or "us", only frame a request ("tell me about ...", "give me the ..."): tool texts
# use them in other senses ("tells you who you are"), so a match on them is a stray one.
_FRAMING_VERBS = frozenset(("tell", "give"))
_FRAMED = frozenset(("me", "us"))


def _framing(said: list[str]) -> frozenset[int]:
    """The positions in `said` of framing verbs: "tell" or "give" followed by "me" or "us"."""
    return frozenset(
        at for at, (word, after) in enumerate(pairwise(said)) if word in _FRAMING_VERBS and after in _FRAMED
    )


_TOPIC_MARKERS = frozenset(("about", "regarding", "concerning", "saying"))
_QUERY_WORD_RE = re.compile(r"[A-Za-z]+")


def topic_start(query: str) -> int | None:
    """Where the request's topic phrase starts (a character offset), or None: the words after "about",
    "regarding", "concerning" or "saying" once something was asked; after "that" right behind the leading
    verb or its object ("remember that ...", "raise an issue that ..."); after the "for" of a find verb
    with its own object ("search the web for ..."). Those words say what the tool works on, not which
    tool it is."""
    seen: list[str] = []  # content words before the current one
    for match in _QUERY_WORD_RE.finditer(query):
        word = match.group().lower()
        if seen and word in _TOPIC_MARKERS:
            return match.end()
        if word == "that" and 1 <= len(seen) <= 2:
            return match.end()
        if word == "for" and len(seen) >= 2 and VERB_CLASS.get(_text.stem(seen[0])) == "find":
            return match.end()
        if word not in _text.STOPWORDS:
            seen.append(word)
    return None


def _compounds(words: list[str], out: _Builder) -> None:
    """Two adjacent words as one (`file system` -> `filesystem`, and tool-name word pairs, which the index
    holds joined); one unknown word as two (`localstorage` -> `local storage`)."""
    vocabulary = out.vocabulary
    for a, b in pairwise(words):
        joined = _text.stem(a + b)
        if joined in vocabulary:
            out.concept(primary=False)[joined] = 1.0
    for word in words:
        if _text.stem(word) in vocabulary or len(word) < 6:
            continue
        for cut in range(3, len(word) - 2):
            head, tail = _text.stem(word[:cut]), _text.stem(word[cut:])
            if head in vocabulary and tail in vocabulary:
                out.concept(primary=False)[head] = 0.7
                out.concept(primary=False)[tail] = 0.7
                break


@cache
def dictionary() -> frozenset[str]:
    """English words of four letters or more (the whole-word entries of the MiniLM WordPiece vocabulary):
    a word in it is never "corrected" to an index term (`stale` is not a typo of `star`)."""
    return frozenset(gzip.decompress(WORDS.read_bytes()).decode("utf-8").split())


def _typos(
    content: list[tuple[str, str]],
    known: Mapping[tuple[str, ...], tuple[str, ...]],
    candidates: tuple[str, ...],
    options: QueryOptions,
    by_term: dict[str, dict[str, float]],
    vocabulary: Collection[str],
) -> None:
    from rapidfuzz import process
    from rapidfuzz.distance import OSA

    english = dictionary()
    for term, word in content:
        if term in vocabulary or (term,) in known or len(term) < 4 or term.isdigit() or term not in by_term:
            continue
        if word in english:
            continue
        max_edits = 1 if len(term) < 8 else 2
        for match, edits, _ in process.extract(term, candidates, scorer=OSA.distance, score_cutoff=max_edits, limit=3):
            if match[0] == term[0]:
                _add(by_term[term], match, options.typo_weight * (1.0 - edits / (len(term) + 1)))


def _expand(
    seq: list[tuple[str, str]],
    known: Mapping[tuple[str, ...], tuple[str, ...]],
    weight: float,
    by_term: dict[str, dict[str, float]],
    sense: Mapping[tuple[str, ...], tuple[str, ...]],
) -> None:
    """Add each phrase's synonyms to the concept of its first word; a phrase in `sense` takes the synonyms
    of another word instead (with that word itself), the meaning the request gives it."""
    stems = [s for s, _ in seq]
    for i in range(len(stems)):
        for n in range(1, MAX_PHRASE + 1):
            key = tuple(stems[i : i + n])
            if len(key) < n:
                break
            meant = sense.get(key)
            expansions = known.get(key) if meant is None else (*meant, *known.get(meant, ()))
            if not expansions:
                continue
            owner = next((by_term[s] for s in key if s in by_term), None)
            if owner is None:
                continue
            for term in expansions:
                if term not in by_term:
                    _add(owner, term, weight)
