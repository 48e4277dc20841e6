"""The host built-ins' labels: a table keyed by host-neutral names (`quiver.builtins`' aliases and VS Code's
tool names, lower-cased), with the names Claude Code and Copilot give the same tools.

A built-in that runs code (a shell, a task, a test run, a notebook cell) gets every label: a command can
fetch a page, read any file, send it anywhere and delete it. Hosts may ask the user before running some
of these; quiver does not assume they do (the user's own settings decide, and they are not in the repo).
"""

from __future__ import annotations

from quiver.builtins import VSCODE_TOOLSETS_TOOLS
from quiver.capabilities.model import LABELS, Capabilities, Label, Reason

_RUNS: tuple[Label, ...] = LABELS
_WEB: tuple[Label, ...] = ("untrusted_input", "exfiltration")
_READS: tuple[Label, ...] = ("private_data",)
_EDITS: tuple[Label, ...] = ("destructive",)
_NONE: tuple[Label, ...] = ()

# name -> (labels, why). Names are compared lower-case; a qualified `set/tool` is looked up by its tool.
TABLE: dict[str, tuple[tuple[Label, ...], str]] = {
    # shells and code runners
    "execute": (_RUNS, "runs shell commands: it can fetch, read, send and delete anything"),
    "shell": (_RUNS, "runs shell commands: it can fetch, read, send and delete anything"),
    "bash": (_RUNS, "runs shell commands: it can fetch, read, send and delete anything"),
    "powershell": (_RUNS, "runs shell commands: it can fetch, read, send and delete anything"),
    "runinterminal": (_RUNS, "runs shell commands: it can fetch, read, send and delete anything"),
    "runcommands": (_RUNS, "runs shell commands: it can fetch, read, send and delete anything"),
    "terminalcommand": (_RUNS, "runs shell commands: it can fetch, read, send and delete anything"),
    "createandruntask": (_RUNS, "runs a task with a command it writes"),
    "runtask": (_RUNS, "runs the workspace's tasks: commands"),
    "runtasks": (_RUNS, "runs the workspace's tasks: commands"),
    "runtests": (_RUNS, "runs the workspace's tests: code the agent can edit"),
    "runnotebookcell": (_RUNS, "runs notebook code"),
    "runnotebooks": (_RUNS, "runs notebook code"),
    "installextension": (_RUNS, "installs and runs a marketplace extension: its publisher's code"),
    "killterminal": (_EDITS, "kills a terminal and what runs in it"),
    # reading the workspace and the machine
    "read": (_READS, "reads workspace files"),
    "readfile": (_READS, "reads workspace files"),
    "view": (_READS, "reads workspace files"),
    "notebookread": (_READS, "reads workspace notebooks"),
    "getnotebooksummary": (_READS, "reads workspace notebooks"),
    "readcelloutput": (_READS, "reads notebook output"),
    "readnotebookcelloutput": (_READS, "reads notebook output"),
    "viewimage": (_READS, "reads workspace images"),
    "problems": (_READS, "reads the workspace's diagnostics"),
    "gettaskoutput": (_READS, "reads task output"),
    "getterminaloutput": (_READS, "reads terminal output"),
    "awaitterminal": (_READS, "reads terminal output"),
    "terminallastcommand": (_READS, "reads the terminal"),
    "terminalselection": (_READS, "reads the terminal"),
    "selection": (_READS, "reads the editor's selection"),
    "testfailure": (_READS, "reads test output"),
    "search": (_READS, "searches workspace files"),
    "grep": (_READS, "searches workspace files"),
    "glob": (_READS, "lists workspace files"),
    "ls": (_READS, "lists workspace files"),
    "codebase": (_READS, "searches workspace files"),
    "filesearch": (_READS, "lists workspace files"),
    "listdirectory": (_READS, "lists workspace files"),
    "textsearch": (_READS, "searches workspace files"),
    "usages": (_READS, "searches workspace code"),
    "searchresults": (_READS, "reads the search view"),
    "changes": (_READS, "reads the workspace's uncommitted changes"),
    "findtestfiles": (_READS, "lists workspace files"),
    "memory": (_READS, "reads the agent's memory files"),
    "getpythonenvironmentinfo": (_READS, "reads the local Python environment"),
    "getpythonexecutablecommand": (_READS, "reads the local Python environment"),
    # editing
    "edit": (_EDITS, "edits and overwrites workspace files"),
    "editfiles": (_EDITS, "edits and overwrites workspace files"),
    "write": (_EDITS, "overwrites workspace files"),
    "multiedit": (_EDITS, "edits workspace files"),
    "notebookedit": (_EDITS, "edits workspace notebooks"),
    "editnotebook": (_EDITS, "edits workspace notebooks"),
    "str_replace": (_EDITS, "edits workspace files"),
    "str_replace_editor": (_EDITS, "edits workspace files"),
    "createfile": (_NONE, "creates new files"),
    "createdirectory": (_NONE, "creates directories"),
    # the web
    "web": (_WEB, "fetches web pages and searches the web: the URL it requests can carry data to any host"),
    "fetch": (_WEB, "fetches a web page: the URL it requests can carry data to any host"),
    "webfetch": (_WEB, "fetches a web page: the URL it requests can carry data to any host"),
    "websearch": (("untrusted_input",), "returns web search results"),
    "opensimplebrowser": (("exfiltration",), "opens a URL the model chooses"),
    "githubrepo": (
        ("untrusted_input", "private_data"),
        "searches a GitHub repository's code (with the user's account)",
    ),
    "githubtextsearch": (("untrusted_input", "private_data"), "searches GitHub (with the user's account)"),
    "activepullrequest": (("untrusted_input", "private_data"), "reads the active pull request and its comments"),
    "extensions": (("untrusted_input",), "returns marketplace extension descriptions, written by their publishers"),
    "copilotcodingagent": (("exfiltration",), "hands the task to the cloud agent, which opens a pull request"),
    # neither
    "agent": (_NONE, "starts a subagent: its own tools are classified with it"),
    "custom-agent": (_NONE, "starts a subagent: its own tools are classified with it"),
    "task": (_NONE, "starts a subagent: its own tools are classified with it"),
    "runsubagent": (_NONE, "starts a subagent: its own tools are classified with it"),
    "todo": (_NONE, "keeps the agent's to-do list"),
    "todowrite": (_NONE, "keeps the agent's to-do list"),
    "todos": (_NONE, "keeps the agent's to-do list"),
}


def classify_builtin(ref: str, canonical: str) -> Capabilities | None:
    """The labels of one built-in reference (`ref` as written, `canonical` as quiver.references resolved
    it), or None when quiver does not know the tool (an extension's, a newer host's)."""
    if canonical == "*":
        every = "`*`: every built-in, `execute` (a shell) included"
        return Capabilities(tuple(Reason(label, every, "built-in") for label in LABELS))
    prefix, _, tool = ref.rpartition("/")
    for name in (tool, canonical.rpartition("/")[2], canonical, prefix):
        if not name or name == "*":
            continue
        entries = [(f"built-in `{ref}`", TABLE[name.lower()])] if name.lower() in TABLE else []
        if name == tool:  # a VS Code tool set named alone: its tools' labels too
            for member in _SETS.get(name.lower(), ()):
                if member.lower() in TABLE:
                    entries.append((f"built-in `{ref}`: its tool `{member}`", TABLE[member.lower()]))
        if not entries:
            continue
        reasons: dict[Label, str] = {}
        for head, (labels, why) in entries:
            for label in labels:
                reasons.setdefault(label, f"{head} {why}")
        return Capabilities(tuple(Reason(label, reasons[label], "built-in") for label in LABELS if label in reasons))
    return None


_SETS = {name.lower(): tools for name, tools in VSCODE_TOOLSETS_TOOLS.items()}
