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
