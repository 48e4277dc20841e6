"""Classify one MCP tool: the labels its annotations, side-effect class, parameters and wording set. Pure.

Each rule returns the reason it fired (which annotation, parameter or word), or None. The first rule to
fire for a label gives that label's reason. `openWorldHint: false` (the server says the tool talks to a
closed world) keeps wording from setting `untrusted_input` and `exfiltration`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from quiver.capabilities import _words as w
from quiver.capabilities.model import Capabilities, Label, Reason
from quiver.model import JSON


@dataclass(frozen=True, slots=True)
class ToolFacts:
    """What the classifier reads of a tool and its server."""

    server: str
    name: str
    description: str = ""
    title: str = ""
    input_schema: Mapping[str, JSON] = field(default_factory=dict)
    annotations: Mapping[str, JSON] = field(default_factory=dict)
    server_description: str = ""  # the MCP config's description, the lock's serverInfo and instructions
    side_effect: str | None = None  # quiver's class when the config sets it (`side_effect = "read_only"`)


@dataclass(frozen=True, slots=True)
class _Seen:
    """The facts, read once: words, verb, parameters and contexts."""

    facts: ToolFacts
    name_words: tuple[str, ...]
    head_words: frozenset[str]  # words of the name and the description's first sentence
    verb: str | None
    action: str | None  # "read" | "write" | None
    action_why: str
    params: Mapping[str, Mapping[str, JSON]]  # key(name) -> schema, top level and one level into items
    shown: Mapping[str, str]  # key(name) -> the name as written
    text: str  # description and title
    context: str  # server name and description, tool description
    memo: dict[str, object] = field(default_factory=dict, compare=False)  # the `_once` helpers' answers


def classify_tool(facts: ToolFacts) -> Capabilities:
    seen = _see(facts)
    closed = facts.annotations.get("openWorldHint") is False
    reasons: list[Reason] = []
    for label, rules in _RULES:
        for rule in rules:
            found = rule(seen)
            if found is None:
                continue
            origin, text = found
            if closed and label in ("untrusted_input", "exfiltration") and origin not in ("annotations", "parameters"):
                continue
            reasons.append(Reason(label, text, origin))
            break
    return Capabilities(tuple(reasons))


def _see(facts: ToolFacts) -> _Seen:
    name_words = tuple(w.words(facts.name))
    description = facts.description or ""
    head = w.first_sentence(description)
    verb = _verb(name_words) or _verb(tuple(w.words(head))[:1])
    action, why = _action(facts, verb)
    params: dict[str, Mapping[str, JSON]] = {}
    shown: dict[str, str] = {}
    for name, schema in _properties(facts.input_schema):
        params.setdefault(w.key(name), schema)
        shown.setdefault(w.key(name), name)
    return _Seen(
        facts=facts,
        name_words=name_words,
        head_words=frozenset((*name_words, *w.words(head))),
        verb=verb,
        action=action,
        action_why=why,
        params=params,
        shown=shown,
        text=f"{facts.title}\n{description}",
        context=f"{facts.server}\n{facts.server_description}\n{description}",
    )


_T = TypeVar("_T")


def _once(helper: Callable[[_Seen], _T]) -> Callable[[_Seen], _T]:
    """A helper of `_Seen` that several rules ask: answered once per tool."""
    name = helper.__name__

    def cached(seen: _Seen) -> _T:
        if name not in seen.memo:
            seen.memo[name] = helper(seen)
        return seen.memo[name]  # type: ignore[return-value]  # stored by this wrapper, of type _T

    return cached


def _verb(words: tuple[str, ...]) -> str | None:
    verbs = [word for word in words if word in w.READ_VERBS or word in w.WRITE_VERBS]
    if not verbs:
        return None
    if verbs[0] in w.HTTP_VERBS and len(verbs) > 1:
        return verbs[1]
    return verbs[0]


def _action(facts: ToolFacts, verb: str | None) -> tuple[str | None, str]:
    if facts.side_effect == "read_only":
        return "read", 'side_effect = "read_only" in the quiver config'
    if facts.side_effect in ("reversible_write", "irreversible_write"):
        return "write", f'side_effect = "{facts.side_effect}" in the quiver config'
    hints = facts.annotations
    if hints.get("readOnlyHint") is True:
        return "read", "annotation `readOnlyHint: true`"
    if hints.get("readOnlyHint") is False or hints.get("destructiveHint") is True:
        return "write", "its annotations say it writes"
    if verb in w.WRITE_VERBS and verb not in w.READ_VERBS:
        return "write", f"verb `{verb}`"
    if verb in w.READ_VERBS:
        return "read", f"verb `{verb}`"
    return None, ""


def _properties(schema: Mapping[str, JSON]) -> Iterator[tuple[str, Mapping[str, JSON]]]:
    """Top-level properties, then those of array items and nested objects one level down."""
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(props, Mapping):
        return
    nested = []
    for name, sub in props.items():
        if not isinstance(sub, Mapping):
            continue
        yield str(name), sub
        items = sub.get("items")
        inner = items if isinstance(items, Mapping) else sub
        if isinstance(inner.get("properties"), Mapping):
            nested.append(inner)
    for inner in nested:
        for name, sub in inner["properties"].items():
            if isinstance(sub, Mapping):
                yield str(name), sub


# ------------------------------------------------------------------------------------------- parameters


@_once
def _url_param(seen: _Seen) -> str | None:
    for name, schema in seen.params.items():
        fmt = schema.get("format")
        if name in w.URL_PARAMS or fmt in ("uri", "url", "iri"):
            return seen.shown[name]
    return None


@_once
def _path_param(seen: _Seen) -> str | None:
    """A parameter naming a local file the tool reads (in a browser, `path` is a URL's or a cookie's)."""
    if _remote_repo(seen) or _url_param(seen) or _browser(seen):
        return None
    for name in seen.params:
        if name in w.OUTPUT_PARAMS:
            continue
        if name in w.PATH_PARAMS or name.endswith(("path", "paths", "dir")):
            return seen.shown[name]
    return None


@_once
def _remote_repo(seen: _Seen) -> bool:
    return all(p in seen.params for p in w.REMOTE_REPO_PARAMS)


@_once
def _text_param(seen: _Seen) -> str | None:
    for name, schema in seen.params.items():
        if name in w.TEXT_PARAMS and schema.get("type") in ("string", "object", None):
            return seen.shown[name]
    return None


def _exec_param(seen: _Seen) -> str | None:
    for name in seen.params:
        if name in w.EXEC_PARAMS:
            return seen.shown[name]
    return None


def _method_values(seen: _Seen) -> Iterator[tuple[str, str]]:
    for name, schema in seen.params.items():
        if name in w.METHOD_PARAMS:
            for value in schema.get("enum") or ():
                if isinstance(value, str):
                    yield seen.shown[name], value


# ------------------------------------------------------------------------------------------- contexts


@_once
def _browser(seen: _Seen) -> bool:
    return "browser" in seen.name_words or bool(w.BROWSER_PHRASES.search(seen.facts.server_description))


@_once
def _workspace(seen: _Seen) -> str | None:
    match = w.WORKSPACE_BRANDS.search(seen.context)
    return match.group(0) if match else None


@_once
def _platform(seen: _Seen) -> str | None:
    if _remote_repo(seen):
        return "a repository (`owner`, `repo`)"
    match = w.PLATFORM_BRANDS.search(seen.context)
    return match.group(0) if match else None


@_once
def _site_only(seen: _Seen) -> str | None:
    match = w.SITE_URL.search(seen.facts.description or "")
    return match.group(0) if match else None


@_once
def _requests_url(seen: _Seen) -> tuple[str, str] | None:
    """(origin, what) when the tool requests a URL the model passes."""
    param = _url_param(seen)
    if param is not None and seen.action != "write":
        return "parameters", f"parameter `{param}`: the server requests the URL it is given"
    if param is not None and _browser(seen):
        return "parameters", f"parameter `{param}`: the browser opens the URL it is given"
    match = w.REQUESTS_URL.search(seen.facts.description or "")
    if match and seen.action != "write":
        return "description", f"description: “{match.group(0).strip()}”"
    return None


@_once
def _executes(seen: _Seen) -> tuple[str, str] | None:
    if _browser(seen) and (w.PAGE_CODE.search(seen.text) or "evaluate" in seen.name_words):
        return None  # page JavaScript: see `_page_code`
    if seen.verb not in w.EXEC_VERBS:
        return None
    param = _exec_param(seen)
    if param is not None:
        return "parameters", f"parameter `{param}`: it runs the code or command it is given"
    match = w.EXEC_PHRASES.search(seen.text)
    if match:
        return "description", f"description: “{match.group(0)}”: it runs code"
    return None


def _page_code(seen: _Seen) -> tuple[str, str] | None:
    if _browser(seen) and (w.PAGE_CODE.search(seen.text) or "evaluate" in seen.name_words):
        return "description", "runs JavaScript in the page"
    return None


def _runs(label: str) -> Callable[[_Seen], tuple[str, str] | None]:
    def rule(seen: _Seen) -> tuple[str, str] | None:
        found = _executes(seen)
        if found is None:
            return None
        return found[0], f"{found[1]} (anything a program can do: {label})"

    return rule


# ------------------------------------------------------------------------------------------- untrusted_input


def _u_annotation(seen: _Seen) -> tuple[str, str] | None:
    if seen.facts.annotations.get("openWorldHint") is True and seen.action == "read":
        return "annotations", "annotation `openWorldHint: true` on a tool that reads: its results come from outside"
    return None


def _u_url(seen: _Seen) -> tuple[str, str] | None:
    found = _requests_url(seen)
    if found is not None:
        return found[0], found[1].replace("requests the URL it is given", "returns what the URL serves")
    param = _url_param(seen)
    if param is not None and _site_only(seen):
        return "parameters", f"parameter `{param}`: it returns what that site serves"
    return None


def _u_web(seen: _Seen) -> tuple[str, str] | None:
    if seen.action == "write":
        return None
    match = w.WEB_PHRASES.search(seen.text)
    if match:
        return "description", f"description: “{match.group(0)}”: web content"
    return None


def _u_browser(seen: _Seen) -> tuple[str, str] | None:
    if not _browser(seen):
        return None
    acts = [word for word in seen.name_words if word in w.BROWSER_ACTS]
    if acts:
        return "name", f"browser action `{acts[0]}`: it answers with the page, which the site writes"
    return None


def _u_third_party(seen: _Seen) -> tuple[str, str] | None:
    if seen.action != "read" or _workspace(seen) or _path_param(seen):
        return None
    if seen.name_words and seen.name_words[-1] in w.META_NOUNS:
        return None
    nouns = sorted(seen.head_words & w.THIRD_PARTY_NOUNS)
    if nouns:
        return "name", f"it reads {', '.join(f'`{n}`' for n in nouns[:3])}: text other people write"
    if seen.name_words and seen.name_words[-1] == "code":  # `search_code`, not `get_code_scanning_alert`
        return "name", "it reads `code`: code other people write"
    if _remote_repo(seen) and seen.name_words and seen.name_words[-1] in {"file", "files", "contents", "content"}:
        return "parameters", "it reads files of a repository anyone may have written (`owner`, `repo`)"
    return None


# ------------------------------------------------------------------------------------------- private_data


def _p_local(seen: _Seen) -> tuple[str, str] | None:
    if seen.action != "read":
        return None
    param = _path_param(seen)
    if param is not None:
        return "parameters", f"parameter `{param}`: it reads local files"
    nouns = sorted(seen.head_words & w.LOCAL_NOUNS)
    if nouns and not _url_param(seen) and not _platform(seen):
        return "name", f"it reads local `{nouns[0]}`"
    return None


def _p_machine(seen: _Seen) -> tuple[str, str] | None:
    if seen.action != "read":
        return None
    nouns = sorted(seen.head_words & (w.MACHINE_NOUNS | w.SECRET_NOUNS))
    if nouns:
        return "name", f"it reads `{nouns[0]}`: the user's own machine, session or credentials"
    store = w.STORE_PHRASES.search(seen.text)
    if store:
        return "description", f"it reads the user's stored {store.group(0)}"
    return None


def _p_account(seen: _Seen) -> tuple[str, str] | None:
    if seen.action != "read" or _url_param(seen):
        return None
    workspace = _workspace(seen)
    if workspace:
        return "description", f"it reads a {workspace} workspace, which only its members see"
    if _remote_repo(seen):
        return "parameters", "it reads a repository (`owner`, `repo`), private ones included with the user's token"
    nouns = sorted(seen.head_words & w.ACCOUNT_NOUNS)
    if nouns:
        return "name", f"it reads `{nouns[0]}` of the user's account"
    if re.search(r"\bauthenticated user\b|\byour (account|token)\b", seen.text, re.IGNORECASE):
        return "description", "it reads the authenticated user's own data"
    return None


def _p_upload(seen: _Seen) -> tuple[str, str] | None:
    if seen.verb in w.UPLOAD_VERBS and any(n in seen.params for n in ("paths", "path", "files", "file")):
        return "parameters", f"verb `{seen.verb}` with local paths: it reads local files and sends them"
    return None


# ------------------------------------------------------------------------------------------- exfiltration


def _x_url(seen: _Seen) -> tuple[str, str] | None:
    found = _requests_url(seen)
    if found is None:
        return None
    site = _site_only(seen)
    if site:
        return None
    return found[0], f"{found[1]}: the URL itself can carry data to any host"


def _x_browser(seen: _Seen) -> tuple[str, str] | None:
    if not _browser(seen):
        return None
    sends = [word for word in seen.name_words if word in w.BROWSER_SENDS]
    if sends:
        return "name", f"browser action `{sends[0]}`: the page (and its scripts) receive what the model types or sends"
    return None


def _x_post(seen: _Seen) -> tuple[str, str] | None:
    if seen.action != "write" or _workspace(seen):
        return None
    text = _text_param(seen)
    platform = _platform(seen)
    if text and platform:
        return "parameters", f"free text (`{text}`) written to {platform}, where others can read it"
    recipient = next((seen.shown[n] for n in seen.params if n in w.RECIPIENT_PARAMS), None)
    if recipient and (seen.verb in w.SEND_VERBS or text):
        return "parameters", f"parameter `{recipient}`: it sends to a recipient the model chooses"
    return None


def _x_upload(seen: _Seen) -> tuple[str, str] | None:
    found = _p_upload(seen)
    return (found[0], f"verb `{seen.verb}`: it sends local files out") if found else None


# ------------------------------------------------------------------------------------------- destructive


def _d_annotation(seen: _Seen) -> tuple[str, str] | None:
    hints = seen.facts.annotations
    if hints.get("destructiveHint") is True and hints.get("readOnlyHint") is not True:
        return "annotations", "annotation `destructiveHint: true`"
    return None


def _d_name(seen: _Seen) -> tuple[str, str] | None:
    verbs = [word for word in seen.name_words if word in w.DELETE_VERBS]
    if verbs:
        return "name", f"verb `{verbs[0]}`"
    return None


def _d_method(seen: _Seen) -> tuple[str, str] | None:
    if seen.action == "read":
        return None
    for param, value in _method_values(seen):
        if set(w.words(value)) & w.DELETE_VERBS:
            return "parameters", f"`{param}` can be `{value}`"
    for name, schema in seen.params.items():
        if schema.get("type") == "boolean" and name in w.TRASH_PARAMS:
            return "parameters", f"parameter `{seen.shown[name]}`: it can move things to the trash"
        if name.startswith("overwrite") or (name.startswith("replace") and schema.get("type") != "boolean"):
            return "parameters", f"parameter `{seen.shown[name]}`: it replaces existing content"
    return None


def _d_overwrite(seen: _Seen) -> tuple[str, str] | None:
    if seen.action == "read":
        return None
    match = w.OVERWRITE_PHRASES.search(seen.text)
    if match:
        return "description", f"description: “{match.group(0)}”"
    param = _path_param(seen) or next((seen.shown[n] for n in seen.params if n in w.OUTPUT_PARAMS), None)
    if param and seen.verb in w.EDIT_VERBS:
        return "parameters", f"verb `{seen.verb}` on `{param}`: it rewrites a file in place"
    return None


_Rule = Callable[[_Seen], tuple[str, str] | None]
_RULES: tuple[tuple[Label, tuple[_Rule, ...]], ...] = (
    ("untrusted_input", (_u_annotation, _runs("untrusted input"), _u_url, _u_third_party, _u_web, _u_browser)),
    ("private_data", (_runs("private data"), _page_code, _p_upload, _p_machine, _p_local, _p_account)),
    ("exfiltration", (_runs("exfiltration"), _page_code, _x_upload, _x_url, _x_browser, _x_post)),
    ("destructive", (_d_annotation, _runs("destructive"), _d_name, _d_method, _d_overwrite)),
)
