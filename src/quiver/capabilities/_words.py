"""The vocabulary the tool classifier reads: verbs, nouns and parameter names, by what they tell. Pure data.

Each set answers one question about a tool (does it read, does it write, what does it reach), so a rule
in `_tool.py` names the set and the word that matched in its reason.
"""

from __future__ import annotations

import re


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


class _Lazy:
    """A regular expression compiled on its first search: lint imports every rule module, and a warm run
    (flows cached) classifies nothing, so importing this module must not compile them."""

    __slots__ = ("_compiled", "_flags", "_source")

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source, self._flags = source, flags
        self._compiled: re.Pattern[str] | None = None

    def search(self, text: str) -> re.Match[str] | None:
        if self._compiled is None:
            self._compiled = re.compile(self._source, self._flags)
        return self._compiled.search(text)

    def findall(self, text: str) -> list[str]:
        if self._compiled is None:
            self._compiled = re.compile(self._source, self._flags)
        return self._compiled.findall(text)


# camelCase and PascalCase humps, acronyms, digit runs; everything else separates words.
_HUMPS = _Lazy(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
# Two-word nouns that must not be read as a verb and a noun (`pull_request_read` reads, it does not pull).
COMPOUNDS = (("pull", "request"), ("pull", "requests"), ("local", "storage"), ("session", "storage"))

READ_VERBS = _set(
    "get gets list lists read reads reader search searches find finds query queries fetch fetches retrieve "
    "retrieves show shows view views describe describes lookup looksup download downloads extract extracts "
    "crawl crawls scrape scrapes browse inspect check count summarize summarise explore open opens load loads "
    "diff status log logs tree info stats map research capture snapshot screenshot export analyze analyse "
    "returns return print watch wait"
)
WRITE_VERBS = _set(
    "create creates add adds post posts new insert inserts append appends put upload uploads submit submits "
    "publish publishes send sends reply replies comment comments share shares fork forks star assign assigns "
    "request requests invite push pushes commit commits merge merges deploy deploys run runs execute executes "
    "trigger triggers start starts write writes save saves set sets copy copies record records update "
    "updates edit edits patch patches modify modifies change changes rename renames move moves replace "
    "replaces manage manages mark marks dismiss dismisses toggle type types fill fills press click clicks "
    "select selects hover drag drop navigate navigates evaluate interact apply applies convert converts "
    "delete deletes remove removes destroy destroys purge purges kill kills terminate terminates wipe "
    "truncate erase clear clears unlink revoke uninstall overwrite overwrites"
)
HTTP_VERBS = frozenset({"post", "put", "patch"})  # `API-post-search` searches: a later verb decides
DELETE_VERBS = _set(
    "delete deletes remove removes destroy destroys purge purges kill kills terminate terminates wipe "
    "truncate erase clear clears unlink revoke uninstall overwrite overwrites rm del"
)
EDIT_VERBS = _set("write writes edit edits update updates modify modifies replace replaces patch rewrite")
UPLOAD_VERBS = _set("upload uploads drop attach")
SEND_VERBS = _set(
    "send sends email mail tweet publish publishes forward forwards share shares notify reply replies post posts"
)
BROWSER_ACTS = _set(
    "click hover drag type fill press select mouse wait navigate back forward dialog tabs find snapshot "
    "screenshot console network annotate evaluate scroll"
)
BROWSER_SENDS = _set("type fill navigate tabs upload drop")

# What a read returns, by its nouns (name words, and the description's first sentence).
THIRD_PARTY_NOUNS = _set(
    "issue issues pullrequest pullrequests pr prs comment comments discussion discussions review reviews "
    "commit commits release releases message messages email emails mail inbox thread threads post posts "
    "story stories submission submissions transcript transcripts article articles wikipedia paper papers "
    "abstract abstracts documentation docs listings notification notifications gist gists tweet "
    "tweets feed feeds news forum video videos advisory advisories"
)
# A name ending in one of these returns facts about the noun before it, not its text (`list_issue_fields`).
META_NOUNS = _set(
    "categories category fields field types type labels label names ids count counts stats settings templates "
    "tags branches"
)
LOCAL_NOUNS = _set("file files directory directories folder folders dir dirs")
MACHINE_NOUNS = _set(
    "process processes session sessions container containers config configuration settings environment"
)
SECRET_NOUNS = _set(
    "cookie cookies localstorage sessionstorage token tokens secret secrets password passwords credential "
    "credentials header headers"
)
ACCOUNT_NOUNS = _set(
    "notification notifications inbox team teams member members collaborator collaborators alert alerts gist "
    "gists repository repositories repo repos workspace database databases me private project projects"
)
STORE_PHRASES = _Lazy(r"knowledge graph|\bmemory\b|\bmemories\b|\bnotes?\b|\bvault\b", re.IGNORECASE)
# Services whose content only their members read and write (reads are private, writes stay inside).
WORKSPACE_BRANDS = _Lazy(
    r"\b(notion|confluence|google (docs|drive|sheets)|sharepoint|onedrive|dropbox|airtable|coda|obsidian)\b",
    re.IGNORECASE,
)
# Hosted platforms whose repositories, trackers and inboxes hold both the public's text and the user's own.
PLATFORM_BRANDS = _Lazy(
    r"\b(github|gitlab|bitbucket|gitea|slack|discord|gmail|outlook|telegram|whatsapp|teams|jira|linear|"
    r"twitter|reddit|mastodon|bluesky)\b",
    re.IGNORECASE,
)
WEB_PHRASES = _Lazy(
    r"\b(search(es)? the (web|internet)|web search|internet|search engine|web ?pages?|websites?|online "
    r"(content|information|sources)|news)\b",
    re.IGNORECASE,
)
BROWSER_PHRASES = _Lazy(r"\bbrowser\b|\bweb page\b|\bplaywright\b|\bpuppeteer\b", re.IGNORECASE)
# "fetch ... URL", "from a URL", "(local/URL)": the tool itself requests the URL.
REQUESTS_URL = _Lazy(
    r"\b(fetch(es|ing)?|loads?|opens?|navigates?|crawls?|requests?|downloads?|reads?|extracts?|scrapes?|"
    r"visits?|maps?)\b[^.]{0,40}\burls?\b|\b(from|or|at) (a |an |any |the given )?urls?\b|/\s*urls?\b",
    re.IGNORECASE,
)
# "a YouTube video URL", "a deepwiki.com repo": the URL can only point at one site.
SITE_URL = _Lazy(
    r"\b(?!A\b|An\b|The\b|Any\b)[A-Z][A-Za-z0-9]+ (video |page |repo |repository )?(url|URL|link)\b"
    r"|\b[a-z0-9-]+\.(com|org|io|net|dev)\b"
)
EXEC_PHRASES = _Lazy(
    r"\b(shell|terminal) commands?\b|\brun(s|ning)? (a |any |arbitrary )?(shell )?commands?\b|\barbitrary "
    r"(code|javascript|commands?)\b|\brce\b|\bdocker (container|compose)\b|\bcompose stack\b|\bterminal "
    r"process\b|\binput to a running process\b",
    re.IGNORECASE,
)
# Verbs of a tool that runs what it is given (a tool that stops or lists processes runs nothing).
EXEC_VERBS = _set("run runs start starts execute executes send sends interact create creates deploy deploys spawn")
PAGE_CODE = _Lazy(r"\b(evaluate|run|execute)s? javascript\b", re.IGNORECASE)
OVERWRITE_PHRASES = _Lazy(
    r"\boverwrit(e|es|ing|ten)\b|\bpermanently (delete|remove)|\bcannot be undone\b|\breplaces? (exact )?"
    r"(line|lines|content|contents|text)\b|\bclears? (all|existing)\b|\btext replacements?\b",
    re.IGNORECASE,
)

# Parameters, by name (lower-cased, separators dropped).
URL_PARAMS = _set(
    "url urls uri uris href link endpoint webhook webhookurl website site siteurl sitemapurl baseurl targeturl"
)
PATH_PARAMS = _set(
    "path paths filepath repopath directory dir folder inputpath inputpaths fileabsolutepath file1path file2path "
    "source sourcepath workdir cwd file files"
)
# Where a tool writes its output: not a file it reads (`filename` of a screenshot, `outputDir`).
OUTPUT_PARAMS = _set("filename filenames outputpath outputdir outputfile destination destpath savepath out")
TEXT_PARAMS = _set(
    "body content contents text message commitmessage committitle comment description title note summary "
    "subject html markdown rationale custominstructions instructions inputs reason caption"
)
RECIPIENT_PARAMS = _set(
    "to recipient recipients cc bcc email emails channel channelid chatid phone phonenumber webhookurl address"
)
EXEC_PARAMS = _set("command cmd code script shell javascript composeyaml")
TRASH_PARAMS = _set("intrash archived trash trashed deleted remove purge")
REMOTE_REPO_PARAMS = ("owner", "repo")
METHOD_PARAMS = _set("method action operation op mode command kind")


def words(text: str) -> list[str]:
    """Lower-case words of a name or sentence, compounds joined: `pull_request_read` -> pullrequest, read."""
    found = [w.lower() for w in _HUMPS.findall(text)]
    out: list[str] = []
    for word in found:
        if out and (out[-1], word) in COMPOUNDS:
            out[-1] += word
        else:
            out.append(word)
    return out


def key(name: str) -> str:
    """A parameter name compared by its letters: `file_path`, `filePath` and `FilePath` are `filepath`."""
    return "".join(ch for ch in name.lower() if ch.isalnum())


def first_sentence(text: str) -> str:
    """Up to the first full stop followed by a space or newline (descriptions lead with what the tool does)."""
    head = " ".join(text.split())
    match = re.search(r"(?<=[.!?])\s", head)
    return head[: match.start()] if match else head
