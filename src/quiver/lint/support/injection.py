"""Prompt-injection heuristics over model-facing text. Pure and fast: each pattern runs only on texts that
contain one of its trigger substrings, so the common clean description costs a few `in` tests.

Tuned against the 673 real tools of the shared corpus (see tests/lint/test_security.py): imperative verbs
only ("read", not "reads": servers describe what they do in the third person, attacks command the model),
qualifiers for generic secrets ("the user's", "all", "stored"), example domains ignored.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

Kind = Literal["markup", "override", "credentials", "redirect", "exfiltration"]


def _lowered(source: str) -> str:
    """A regex source in lower case; escapes (`\\S`, `\\B`, ...) and named groups untouched."""
    out = []
    escaped = False
    for ch in source:
        out.append(ch if escaped else ch.lower())
        escaped = ch == "\\" and not escaped
    return "".join(out).replace("(?p<", "(?P<").replace("(?p=", "(?P=")


class _Pattern:
    """A case-insensitive pattern, run case-sensitively on lower-cased text (several times faster in `re`).

    Falls back to `re.IGNORECASE` for the rare text whose lower-casing changes its length (positions
    would no longer line up).
    """

    __slots__ = ("_ci", "_cs", "source")

    def __init__(self, source: str) -> None:
        self.source = source  # compiled on first use (issue 18): a warm or clean run never pays for it
        self._ci: re.Pattern[str] | None = None
        self._cs: re.Pattern[str] | None = None

    @property
    def ci(self) -> re.Pattern[str]:
        if self._ci is None:
            self._ci = re.compile(self.source, re.IGNORECASE)
        return self._ci

    @property
    def cs(self) -> re.Pattern[str]:
        if self._cs is None:
            self._cs = re.compile(_lowered(self.source))
        return self._cs

    def search(self, text: str, lower: str | None) -> re.Match[str] | None:
        return self.cs.search(lower) if lower is not None else self.ci.search(text)

    def finditer(self, text: str, lower: str | None) -> Iterator[re.Match[str]]:
        return self.cs.finditer(lower) if lower is not None else self.ci.finditer(text)


_MARKUP = _Pattern(
    r"<\s*/?\s*(?:important|system|sys|instructions?|hidden|system[-_ ]?(?:prompt|message))\s*>"
    r"|<\|\s*(?:im_start|im_end|system|user|assistant|endoftext|start_header_id|end_header_id|eot_id)\s*\|>"
    r"|\[/?INST\]"
    r"|<<\s*/?\s*SYS\s*>>"
    r"|<!--",
)
_USER = r"(?:the\s+)?users?\b(?!['\u2019]s|\s*(?:id|ids|name|names|details|profile|data|account|info|information)\b)"
_OVERRIDE = _Pattern(
    r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|every\s+)?(?:of\s+)?"
    r"(?:the\s+|your\s+|my\s+|these\s+|those\s+)?"
    r"(?:previous|prior|above|earlier|preceding|former|original|system|existing|other|initial)\s+"
    r"(?:instructions?|prompts?|rules|directions|guidelines|directives|messages?|context|constraints)\b"
    r"|\b(?:ignore|disregard|forget)\s+(?:all|everything)\s+(?:you\s+(?:were|have\s+been)\s+told|above|before)\b"
    r"|\b(?:do\s+not|don['\u2019]?t|never|without)\s+(?:tell|mention|inform|notify|reveal|disclose|alert)(?:s|ing)?\b"
    r"[^.!?\n]{0,60}?\b" + _USER + r"|\b(?:do\s+not|don['\u2019]?t|never|without)\s+(?:let|letting)\s+"
    r"(?:the\s+)?users?\s+know\b"
    r"|\b(?:do\s+not|don['\u2019]?t|never)\s+(?:mention|reveal|disclose)\s+(?:this|that|it|these)\b"
    r"|\b(?:hide|conceal|keep)\s+(?:this|it|that|these)\s+(?:secret\s+|hidden\s+)?from\s+(?:the\s+)?users?\b",
)

_SECRET_FILE = _Pattern(
    r"~/\.ssh\b|\.ssh/|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|(?<![\w.$])\.env\b|\bmcp(?:[-_]config)?\.json\b"
    r"|\bclaude_desktop_config\.json\b|\.aws/credentials\b|\.git-credentials\b|(?<![\w.])\.netrc\b"
    r"|(?<![\w.])\.npmrc\b|(?<![\w.])\.pypirc\b|/etc/(?:passwd|shadow)\b|\.kube/config\b"
    r"|\.docker/config\.json\b|\bcredentials\.json\b|\.gnupg\b|\bwallet\.dat\b|\.config/gh/hosts\.yml\b",
)
_TAKE = (
    r"(?:read|cat|collect|gather|extract|dump|harvest|grab|steal|exfiltrate|leak|copy|upload|send|forward"
    r"|include|pass|attach|append|embed|post|transmit|share|paste)"
)
# Checked in the 80 characters before / after a secret file's mention.
_TAKE_BEFORE = _Pattern(rf"\b{_TAKE}\b[^\n]{{0,80}}$|\bcontents?\s+of\s+[^\n]{{0,20}}$")
_TAKE_AFTER = _Pattern(rf"^[^\n]{{0,80}}?\b{_TAKE}\b")
_SECRET_TERM = _Pattern(
    r"\b(?:api[ _-]?keys?|access[ _-]?tokens?|auth(?:entication)?[ _-]?tokens?|bearer[ _-]?tokens?"
    r"|refresh[ _-]?tokens?|passwords?|passphrases?|private[ _-]?keys?|secret[ _-]?keys?|secrets|credentials"
    r"|session[ _-]?(?:cookies?|tokens?)|cookies|seed[ _-]?phrases?|mnemonics?|environment[ _-]?variables"
    r"|env[ _-]?vars)\b",
)
_OWNED = r"(?:the\s+user['\u2019]?s|users?['\u2019]s?|all|any|every|stored|saved|cached|local|environment['\u2019]?s?)"
# Checked in the 70 characters before a secret term: "send all the user's API keys".
_TAKE_OWNED = _Pattern(rf"\b{_TAKE}\b[^.!?\n]{{0,40}}?\b{_OWNED}\b[^.!?\n]{{0,25}}$")
# Triggers run case-sensitively on the lower-cased text: plain literal alternations are fast that way.
_FILE_TRIGGER = re.compile(
    r"\.ssh|id_|\.env|mcp|claude_desktop|\.aws|credentials|\.netrc|\.npmrc|\.pypirc|/etc/|\.kube|\.docker"
    r"|\.gnupg|wallet|/gh/"
)
_TERM_TRIGGER = re.compile(r"api|token|passw|passphrase|secret|credential|cookie|seed|mnemonic|private|env")
_OWNED_TRIGGER = re.compile(r"user|all|any|every|stored|saved|cached|local|environment")
_OVERRIDE_TRIGGER = re.compile(r"ignore|disregard|forget|override|bypass")
_CONCEAL_TRIGGER = re.compile(r"not |n't|n\u2019t|never|without|hide|conceal|keep")

_REDIRECT = _Pattern(
    r"\b(?:send|forward|copy|cc|bcc|redirect|route|upload|post|report|deliver|mail|email)(?:s|ed|ing)?\b"
    r"[^\n]{0,80}?\bto\s+(?P<target>[\w.+-]+@[\w-]+(?:\.[\w-]+)+|https?://[^\s)'\"`>]+)",
)
_INTENSIFIER = _Pattern(r"\b(?:also|always|all|every|secretly|silently|quietly|instead|must|additionally|bcc|cc)\b")
_SHADOW = _Pattern(
    r"\bwhen\s+this\s+tool\s+is\s+(?:available|present|loaded|installed|enabled|active)\b"
    r"|\bside[- ]effects?\s+on\s+(?:the\s+)?(?:also\s+present\s+|other\s+)?[\w.-]+\s+tool\b"
    r"|\b(?:all|any|every)\s+other\s+tools?\s+(?:must|should|have\s+to|need\s+to)\b",
)
_EXAMPLE_DOMAIN = re.compile(r"(?:^|[@./])(?:example\.(?:com|org|net)|[\w-]+\.(?:test|example|invalid)|localhost)\b")

_IMAGE = _Pattern(r"!\[[^\]\n]{0,200}\]\(\s*<?(?P<url>https?://[^)\s>]+)")
_LINK = _Pattern(r"(?<!!)\[[^\]\n]{0,200}\]\(\s*<?(?P<url>https?://[^)\s>]+)")
_HTML_IMG = _Pattern(r"<img\b[^>]{0,200}?\bsrc\s*=\s*[\"']?(?P<url>https?://[^\"'\s>]+)")
_TEMPLATE = _Pattern(r"\{[^}]*\}|\$\{|\$[A-Za-z_]\w*|%s|%7B|\[[A-Za-z_ ]+\]|<[^>]*>")

_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]")
_RTL = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]")
_JOINING = re.compile("[\u0600-\u06ff\u0750-\u077f\u08a0-\u08ff\u0900-\u0dff\ufb50-\ufdff\ufe70-\ufefc]")


@dataclass(frozen=True, slots=True)
class Match:
    kind: Kind
    phrase: str
    start: int


def scan(text: str) -> Iterator[Match]:
    """The first match of each kind of injection text, in kind order."""
    lower = text.lower()
    low = lower if len(lower) == len(text) else None
    if "<" in text or "[" in text:
        yield from _first("markup", _MARKUP, text, low)
    if _OVERRIDE_TRIGGER.search(lower) or ("user" in lower and _CONCEAL_TRIGGER.search(lower)):
        yield from _first("override", _OVERRIDE, text, low)
    found = _credentials(text, lower, low)
    if found is not None:
        yield found
    if "to " in lower and ("@" in text or "http" in lower):
        for match in _REDIRECT.finditer(text, low):
            target = text[match.start("target") : match.end("target")].lower()
            start = max(0, match.start() - 60)
            window = text[start : match.end()]
            if not _EXAMPLE_DOMAIN.search(target) and _INTENSIFIER.search(window, _cut(low, start, match.end())):
                yield Match("redirect", text[match.start() : match.end()], match.start())
                break
    if "tool" in lower:
        yield from _first("redirect", _SHADOW, text, low)
    if "](" in text or "<img" in lower:
        yield from _exfiltration(text, low)


def _cut(low: str | None, start: int, end: int) -> str | None:
    return low[start:end] if low is not None else None


def _credentials(text: str, lower: str, low: str | None) -> Match | None:
    """A request to read or send a credential file, or the user's secrets."""
    if _FILE_TRIGGER.search(lower):
        for match in _SECRET_FILE.finditer(text, low):
            start, end = max(0, match.start() - 100), match.end() + 100
            hit = _TAKE_BEFORE.search(text[start : match.start()], _cut(low, start, match.start()))
            if hit is not None:
                return Match("credentials", text[start + hit.start() : match.end()], start + hit.start())
            hit = _TAKE_AFTER.search(text[match.end() : end], _cut(low, match.end(), end))
            if hit is not None:
                return Match("credentials", text[match.start() : match.end() + hit.end()], match.start())
    if _TERM_TRIGGER.search(lower) and _OWNED_TRIGGER.search(lower):
        for match in _SECRET_TERM.finditer(text, low):
            start = max(0, match.start() - 70)
            hit = _TAKE_OWNED.search(text[start : match.start()], _cut(low, start, match.start()))
            if hit is not None:
                return Match("credentials", text[start + hit.start() : match.end()], start + hit.start())
    return None


def _first(kind: Kind, pattern: _Pattern, text: str, low: str | None) -> Iterator[Match]:
    match = pattern.search(text, low)
    if match is not None:
        yield Match(kind, text[match.start() : match.end()], match.start())


def _exfiltration(text: str, low: str | None) -> Iterator[Match]:
    for pattern, anywhere in ((_IMAGE, True), (_HTML_IMG, True), (_LINK, False)):
        for match in pattern.finditer(text, low):
            url = text[match.start("url") : match.end("url")]
            checked = url if anywhere else url.partition("?")[2]
            if checked and _TEMPLATE.search(checked, checked.lower() if low is not None else None):
                yield Match("exfiltration", text[match.start() : match.end()], match.start())
                return


@dataclass(frozen=True, slots=True)
class Invisible:
    position: int  # 1-based character position in the text
    code_point: int


def invisible(text: str) -> list[Invisible]:
    """Invisible and bidirectional-control characters, minus their legitimate uses.

    Allowed: a byte-order mark at the very start; ZWJ inside emoji sequences; ZWNJ between letters of
    scripts that need it (Arabic, Persian, Indic); LRM/RLM in text that contains right-to-left letters.
    """
    found = []
    for match in _INVISIBLE.finditer(text):
        i = match.start()
        ch = match.group(0)
        before = text[i - 1] if i > 0 else ""
        after = text[i + 1] if i + 1 < len(text) else ""
        if ch == "\ufeff" and i == 0:
            continue
        if ch == "\u200d" and _emoji(before) and _emoji(after):
            continue
        if ch == "\u200c" and before and after and _JOINING.match(before) and _JOINING.match(after):
            continue
        if ch in "\u200e\u200f" and _RTL.search(text):
            continue
        found.append(Invisible(i + 1, ord(ch)))
    return found


def _emoji(ch: str) -> bool:
    if not ch:
        return False
    code = ord(ch)
    return code >= 0x1F000 or 0x2600 <= code <= 0x27BF or code in (0xFE0F, 0x2640, 0x2642, 0x2695)


def tag_text(text: str) -> str:
    """The ASCII hidden in Unicode tag characters ("ASCII smuggling"), if any."""
    return "".join(chr(ord(c) - 0xE0000) for c in text if 0xE0020 <= ord(c) <= 0xE007E)


def visible(text: str) -> str:
    """The text with invisible characters removed: what a human reviewer reads."""
    return _INVISIBLE.sub("", text)


_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*[A-Za-z0-9]")
_HUMP = re.compile(r"[a-z][A-Z]")


def distinctive(name: str) -> bool:
    """A tool name unlikely to appear in prose by accident: 5+ characters with `_`, `-`, `.` or a camel hump."""
    return len(name) >= 5 and (any(c in name for c in "_-.") or _HUMP.search(name) is not None)


def identifiers(text: str) -> set[str]:
    """Identifier-like tokens of a text (for tool-name mentions)."""
    return {t for t in _IDENTIFIER.findall(text)}


def hazards(text: str) -> list[tuple[str, str]]:
    """(kind, phrase) for what SEC001-006 flag in one text, as `quiver diff` compares two versions of it:
    invisible characters first (kind "invisible", the characters), then each kind `scan` finds in the visible
    text plus any ASCII smuggled in tag characters (what `lint/sec/tool_poisoning.py` scans)."""
    found: list[tuple[str, str]] = []
    hidden = invisible(text)
    if hidden:
        found.append(("invisible", "".join(chr(h.code_point) for h in hidden[:5])))
        smuggled = tag_text(text)
        text = visible(text) + (" " + smuggled if smuggled else "")
    found.extend((match.kind, match.phrase) for match in scan(text))
    return found
