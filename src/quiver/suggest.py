"""Did-you-mean suggestions for names a user typed."""

from __future__ import annotations

from collections.abc import Iterable

MIN_SIMILARITY = 0.6


def closest(word: str, choices: Iterable[str], minimum: float = MIN_SIMILARITY) -> str | None:
    """The choice nearest by Damerau-Levenshtein (case-insensitive; ties: shorter, then alphabetical)."""
    from rapidfuzz import process
    from rapidfuzz.distance import DamerauLevenshtein

    candidates = sorted(set(choices))
    lowered = [c.lower() for c in candidates]
    scorer = DamerauLevenshtein.normalized_similarity
    low = word.lower()
    # a looser cutoff in C, then the exact score of the few left (the batch rounds a boundary score down)
    found = process.extract(low, lowered, scorer=scorer, score_cutoff=max(0.0, minimum - 0.01), limit=None)
    scored = ((scorer(low, lowered[i]), candidates[i]) for _, _, i in found)
    best = min(((-score, len(c), c) for score, c in scored if score >= minimum), default=None)
    return best[2] if best else None


def did_you_mean(word: str, choices: Iterable[str], fallback: str = "check the spelling") -> str:
    guess = closest(word, choices)
    return f"did you mean `{guess}`?" if guess else fallback


def typo_of(word: str, choices: Iterable[str]) -> str | None:
    """The choice `word` is a typo of: one edit away (two from 8 characters on), case-insensitive; None for
    a word under 4 characters or one that is itself a choice."""
    from rapidfuzz import process
    from rapidfuzz.distance import DamerauLevenshtein

    low = word.lower()
    if len(low) < 4:
        return None
    allowed = 2 if len(low) >= 8 else 1
    candidates = sorted(set(choices))
    lowered = [c.lower() for c in candidates]
    found = process.extract(low, lowered, scorer=DamerauLevenshtein.distance, score_cutoff=allowed, limit=None)
    near = sorted((int(d), len(candidates[i]), candidates[i]) for _, d, i in found)
    return next((c for d, _, c in near if 0 < d <= allowed), None)
