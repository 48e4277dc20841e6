"""Routing rule about skills competing for selection: near-identical descriptions in one listing (ROUTE008)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from quiver._search._similar import first_sentence
from quiver.findings.rule import Rule
from quiver.lint.engine import LintContext
from quiver.lint.route.near_duplicate_agent_descriptions import near_duplicate_descriptions
from quiver.lint.support.route_words import difference, name_words, stem
from quiver.lint.support.skill_views import bare_name, listed_to, model_invocable, skill_views
from quiver.model import Finding
from quiver.sources.skills import Skill

_WORD = re.compile(r"[^\W_]+")  # prose words: `feature_request.yml` is three
_SHORT_FORM = 4  # a stem of 4+ letters that starts another stands for it: implement / implementation


def _stems(text: str) -> frozenset[str]:
    """The stems of every word of `text` (generic ones too: a skill's name may be one, `implement`), and of
    each run of two or three words written together (`ASP.NET Core` says `aspnetcore`). No synonyms: `new`
    in "new requirements" does not say `create`."""
    found = [w.lower() for w in _WORD.findall(text)]
    runs = [found[i : i + n] for n in (1, 2, 3) for i in range(len(found) - n + 1)]
    return frozenset(stem("".join(run)) for run in runs)


def _says(word: str, stems: frozenset[str]) -> bool:
    """Whether `stems` hold the name word, or a longer form of it (`implement` in `implementation`)."""
    return word in stems or (len(word) >= _SHORT_FORM and any(s.startswith(word) for s in stems))


def _own_word(name: set[str], other_name: set[str], texts: tuple[str, str], others: tuple[str, str]) -> bool:
    """Whether a word of `name` the other name lacks is said by this skill's description and not by the
    other's: in the whole text, or in the first sentence (descriptions that name their siblings)."""
    mine = [_stems(t) for t in texts]
    theirs = [_stems(t) for t in others]
    return any(_says(w, m) and not _says(w, t) for w in name - other_name for m, t in zip(mine, theirs, strict=True))


def told_apart(a: Skill, b: Skill) -> bool:
    """Whether each skill's name has a word the other's lacks that its own description says and the other's
    does not (`aws-review` / `azure-review`, `create-plan` / `update-plan`): the listing shows the name
    beside the description, so a request naming that word picks one of them."""
    name_a, name_b = set(name_words(bare_name(a))), set(name_words(bare_name(b)))
    text_a, text_b = a.description or "", b.description or ""
    texts_a, texts_b = (text_a, first_sentence(text_a)), (text_b, first_sentence(text_b))
    return _own_word(name_a, name_b, texts_a, texts_b) and _own_word(name_b, name_a, texts_b, texts_a)


def check(ctx: LintContext) -> Iterator[Finding]:
    views = skill_views(ctx)
    # Every skill some listing holds that the model may pick, compared once over the whole project (the
    # IDF sees every description); a pair counts only where one listing holds both.
    chosen = {s.path: s for v in views for s in v.skills if s.description and model_invocable(s)}
    skills = [chosen[path] for path in sorted(chosen)]
    if len(skills) < 2:
        return
    pairs = near_duplicate_descriptions(ctx, [s.id for s in skills], [s.description or "" for s in skills])
    for (i, j), raw in sorted(pairs.items()):
        a, b = skills[i], skills[j]
        if bare_name(a) == bare_name(b):
            continue  # one name twice: SKILL004
        if told_apart(a, b):
            continue
        seen_by = listed_to(views, a, b)
        if seen_by is None:
            continue  # never listed together (two plugins)
        yield NEAR_DUPLICATE_SKILL_DESCRIPTIONS.finding(
            location=a.key_locations.get("description", a.location),
            skill=a.id,
            other=b.id,
            other_file=b.path,
            seen_by=seen_by,
            similarity=f"{round(raw, 2):.2f}",
            difference=difference(a.id, a.description or "", b.id, b.description or ""),
        )


NEAR_DUPLICATE_SKILL_DESCRIPTIONS = Rule(
    code="ROUTE008",
    name="near-duplicate-skill-descriptions",
    severity="warning",
    check=check,
    message=(
        "skills `{skill}` and `{other}` (`{other_file}`) have near-identical descriptions (similarity "
        "{similarity}), both listed to {seen_by}"
    ),
    hint="say when to pick each: {difference}",
    doc="""\\
## What it does
Flags two skills listed together whose descriptions read alike (similarity 0.80 or more). Listed
together means to a session's main thread or to one agent, as SKILL004 counts it; the similarity is
ROUTE003's (the larger of the IDF-weighted cosine of their terms, their plain word overlap at 0.90 or more, and the
embedding of their first sentences where the lock records it). Skills with `disable-model-invocation:
true`, which the model never picks, and two skills of one name (SKILL004) are left out, and so is a pair
whose names each carry a word that only that skill's description says (`aws-review` / `azure-review`,
`create-plan` / `update-plan`): the listing shows the name beside the description, and a request naming
that word picks one. The finding is on the skill whose file sorts first; the hint lists the words each
description has that the other lacks.

## Why is this bad?
The model picks a skill by its listed name and description alone, before reading any body. Two skills
that say the same thing compete: which one loads is a coin toss, and the other's instructions are never
used for the work they were written for, while both descriptions are paid in every session.

## Example
```yaml
# .claude/skills/pdf-extract/SKILL.md
description: Extract text and tables from PDF files. Use when working with PDF documents.
# .claude/skills/pdf-reader/SKILL.md
description: Extract the text and tables of PDF files. Use when working with PDF documents.
```
Use instead: one skill, or descriptions that say when to pick each:
```yaml
# .claude/skills/pdf-forms/SKILL.md
description: Fill and flatten PDF forms. Use when the user asks to fill in or sign a PDF form.
```

## Fix
Merge the two skills, delete the stale copy, or rewrite one description around what only that skill
does and when to pick it.

## References
Agent Skills specification (agentskills.io/specification): `description` says what the skill does and
when to use it; Claude Code docs, skills (the listing the model picks from).
""",
)


RULES: tuple[Rule, ...] = (NEAR_DUPLICATE_SKILL_DESCRIPTIONS,)
