"""Rule documentation for viewers that want plain text (SARIF `fullDescription`, `help.text`).

Rule docs are markdown with the headings of `quiver.findings.rule.DOC_HEADINGS`. `plain_text` drops the markup a
viewer would show literally (headings, backticks, emphasis, fences, link syntax) and keeps the words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
_LINK = re.compile(r"!?\[([^\]]*)\]\(([^)\s]+)[^)]*\)")
_EMPHASIS = re.compile(r"(\*\*|__|(?<![\w*])\*(?=\S)|(?<=\S)\*(?![\w*]))")


def plain_text(markdown: str, *, sections: Sequence[str] = ()) -> str:
    """`markdown` without its markup; with `sections`, only those `## ` sections, headings dropped."""
    out: list[str] = []
    keep = not sections
    fenced = False
    for line in markdown.strip().splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        heading = None if fenced else _HEADING.match(line)
        if heading:
            title = heading.group(1)
            keep = not sections or title in sections
            if keep and not sections:
                out.append(f"{title.rstrip('?:.')}:" if not title.endswith("?") else title)
            continue
        if keep:
            out.append("    " + line if fenced else _inline(line))
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()


def _inline(line: str) -> str:
    """Markup removed outside code spans; a code span keeps its text verbatim, without the backticks."""
    parts = line.split("`")
    for i in range(0, len(parts), 2):  # even parts are outside code spans
        text = _LINK.sub(lambda m: m.group(1) if m.group(1) == m.group(2) else f"{m.group(1)} ({m.group(2)})", parts[i])
        parts[i] = _EMPHASIS.sub("", text)
    return "".join(parts)
