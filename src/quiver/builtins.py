"""Host built-in tools: the aliases of custom agent files and VS Code's own tool names."""

from __future__ import annotations

# Primary alias -> compatible names (GitHub custom-agents configuration reference), compared case-insensitively.
ALIASES: dict[str, tuple[str, ...]] = {
    "execute": ("shell", "bash", "powershell"),
    "read": ("notebookread", "view"),
    "edit": ("multiedit", "write", "notebookedit", "str_replace", "str_replace_editor"),
    "search": ("grep", "glob"),
    "agent": ("custom-agent", "task"),
    "web": ("websearch", "webfetch"),
    "todo": ("todowrite",),
}
# VS Code built-in tools and tool sets, as agent files name them unqualified (legacy) or as a prefix.
VSCODE_TOOL_NAMES = tuple(
    name
    for name in [
        "activePullRequest",
        "changes",
        "codebase",
        "copilotCodingAgent",
        "createAndRunTask",
        "createDirectory",
        "createFile",
        "editFiles",
        "editNotebook",
        "extensions",
        "fetch",
        "fileSearch",
        "findTestFiles",
        "getPythonEnvironmentInfo",
        "getPythonExecutableCommand",
        "getTaskOutput",
        "getTerminalOutput",
        "githubRepo",
        "installExtension",
        "listDirectory",
        "memory",
        "new",
        "newWorkspace",
        "openSimpleBrowser",
        "problems",
        "readCellOutput",
        "readFile",
        "renderMermaidDiagram",
        "runCommand",
        "runCommands",
        "runInTerminal",
        "runNotebooks",
        "runSubagent",
        "runTask",
        "runTasks",
        "runTests",
        "searchResults",
        "terminalCommand",
        "terminalLastCommand",
        "terminalSelection",
        "testFailure",
        "textSearch",
        "think",
        "todos",
        "updateUserPreferences",
        "usages",
        "viewImage",
        "vscodeAPI",
        "getProjectSetupInfo",
    ]
)
VSCODE_TOOLS = frozenset(name.lower() for name in VSCODE_TOOL_NAMES)
VSCODE_TOOLSETS = frozenset({*ALIASES, "vscode", "runcommands", "runtasks", "runnotebooks", "new", "testing"})

_CANONICAL = {alias: primary for primary, names in ALIASES.items() for alias in names}


def builtin_alias(ref: str) -> str | None:
    """The primary alias for a built-in reference (`Bash` -> `execute`), or None."""
    low = ref.lower()
    if low in ALIASES:
        return low
    return _CANONICAL.get(low)


def is_vscode_tool(ref: str) -> bool:
    return ref.lower() in VSCODE_TOOLS


def is_toolset(prefix: str) -> bool:
    return prefix.lower() in VSCODE_TOOLSETS


def known_names() -> list[str]:
    """Every built-in name, for did-you-mean suggestions."""
    return sorted({*ALIASES, *_CANONICAL, *VSCODE_TOOL_NAMES})
