"""Did-you-mean: `closest` and `typo_of` score in rapidfuzz's batch loop and keep the documented choice."""

from __future__ import annotations

import random

from rapidfuzz.distance import DamerauLevenshtein

from quiver.suggest import closest, typo_of


def _closest_reference(word: str, choices: list[str], minimum: float) -> str | None:
    """The rule as documented: best similarity, then shorter, then alphabetical; one choice at a time."""
    best = None
    for choice in sorted(set(choices)):
        score = DamerauLevenshtein.normalized_similarity(word.lower(), choice.lower())
        key = (-score, len(choice), choice)
        if score >= minimum and (best is None or key < best):
            best = key
    return best[2] if best else None


def _typo_reference(word: str, choices: list[str]) -> str | None:
    low = word.lower()
    if len(low) < 4:
        return None
    allowed = 2 if len(low) >= 8 else 1
    found = sorted((DamerauLevenshtein.distance(low, c.lower()), len(c), c) for c in set(choices))
    return next((c for d, _, c in found if 0 < d <= allowed), None)


def test_suggestions_match_the_one_at_a_time_rule_including_boundary_scores() -> None:
    boundary = 0
    for seed in range(4):
        rng = random.Random(seed)
        words = ["".join(rng.choice("abcdeAB_") for _ in range(rng.randint(2, 12))) for _ in range(300)]
        for word in words:
            choices = rng.sample(words, 60)
            for minimum in (0.5, 0.6, 0.75, 0.85):
                expected = _closest_reference(word, choices, minimum)
                assert closest(word, choices, minimum) == expected, (word, minimum)
                if expected is not None:
                    score = DamerauLevenshtein.normalized_similarity(word.lower(), expected.lower())
                    boundary += score == minimum
            assert typo_of(word, choices) == _typo_reference(word, choices), word
    assert boundary > 10  # scores exactly at the cutoff were exercised


def test_a_typo_is_found_case_insensitively_and_an_exact_name_is_not_a_typo() -> None:
    assert typo_of("serch", ["search", "read"]) == "search"
    assert typo_of("Search", ["search"]) is None
    assert closest("GITHUB", ["github", "gitlab"]) == "github"
