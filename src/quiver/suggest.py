"""Did-you-mean suggestions for names a user typed."""

from __future__ import annotations

from collections.abc import Iterable

MIN_SIMILARITY = 0.6


def closest(word: str, choices: Iterable[str], minimum: float = MIN_SIMILARITY) -> str | None:
    """The choice nearest by Damerau-Levenshtein (case-insensitive; ties: shorter, then alphabetical)."""
    from rapidfuzz.distance import DamerauLevenshtein

    low = word.lower()
    best: tuple[float, int, str] | None = None
    for choice in sorted(set(choices)):
        score = DamerauLevenshtein.normalized_similarity(low, choice.lower())
        key = (-score, len(choice), choice)
        if score >= minimum and (best is None or key < best):
            best = key
    return best[2] if best else None


def did_you_mean(word: str, choices: Iterable[str], fallback: str = "check the spelling") -> str:
    guess = closest(word, choices)
    return f"did you mean `{guess}`?" if guess else fallback


def typo_of(word: str, choices: Iterable[str]) -> str | None:
    """The choice `word` is a typo of: one edit away (two from 8 characters on), case-insensitive; None for
    a word under 4 characters or one that is itself a choice."""
    from rapidfuzz.distance import DamerauLevenshtein

    low = word.lower()
    if len(low) < 4:
        return None
    allowed = 2 if len(low) >= 8 else 1
    found = sorted((DamerauLevenshtein.distance(low, c.lower()), len(c), c) for c in set(choices))
    return next((c for d, _, c in found if 0 < d <= allowed), None)
