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
# VS Code built-in tool sets and their tools: vscode-docs `docs/copilot/reference/copilot-vscode-features.md`
# ("Chat tools", 2026-05), plus the names older VS Code releases used (tools moved between sets, and the
# legacy sets `runCommands`, `runTasks`, `runNotebooks`, `new`, `testing`), as awesome-copilot's agents name them.
VSCODE_TOOLSETS_TOOLS: dict[str, tuple[str, ...]] = {
    "agent": ("runSubagent",),
    "browser": (),  # experimental: its tools vary by release
    "edit": ("createDirectory", "createFile", "editFiles", "editNotebook"),
    "execute": (
        "awaitTerminal",
        "createAndRunTask",
        "getTaskOutput",
        "getTerminalOutput",
        "killTerminal",
        "runInTerminal",
        "runNotebookCell",
        "runTask",
        "runTests",
        "testFailure",
    ),
    "read": (
        "getNotebookSummary",
        "getTaskOutput",
        "problems",
        "readCellOutput",
        "readFile",
        "readNotebookCellOutput",
        "terminalLastCommand",
        "terminalSelection",
        "viewImage",
    ),
    "search": ("changes", "codebase", "fileSearch", "listDirectory", "searchResults", "textSearch", "usages"),
    "todo": ("todos",),
    "vscode": (
        "askQuestions",
        "extensions",
        "getProjectSetupInfo",
        "installExtension",
        "memory",
        "newWorkspace",
        "openSimpleBrowser",
        "runCommand",
        "vscodeAPI",
    ),
    "web": ("fetch", "githubRepo", "githubTextSearch"),
    "new": ("newWorkspace", "getProjectSetupInfo", "installExtension", "runVscodeCommand", "newJupyterNotebook"),
    "runCommands": ("runInTerminal", "getTerminalOutput", "terminalLastCommand", "terminalSelection"),
    "runNotebooks": ("editNotebook", "getNotebookSummary", "readNotebookCellOutput", "runNotebookCell"),
    "runTasks": ("createAndRunTask", "getTaskOutput", "runTask"),
    "testing": ("findTestFiles", "runTests", "testFailure"),
}
# Tools agents also name unqualified: the tools above, and stand-alone ones without a tool set.
VSCODE_TOOL_NAMES = tuple(
    sorted(
        {
            *(tool for tools in VSCODE_TOOLSETS_TOOLS.values() for tool in tools),
            "activePullRequest",
            "copilotCodingAgent",
            "findTestFiles",
            "getPythonEnvironmentInfo",
            "getPythonExecutableCommand",
            "githubTextSearch",
            "readCellOutput",
            "renderMermaidDiagram",
            "runCommands",
            "runNotebooks",
            "runTasks",
            "searchResults",
            "selection",
            "terminalCommand",
            "think",
            "updateUserPreferences",
        }
    )
)
VSCODE_TOOLS = frozenset(name.lower() for name in VSCODE_TOOL_NAMES)
VSCODE_TOOLSETS = frozenset({*ALIASES, *(name.lower() for name in VSCODE_TOOLSETS_TOOLS)})

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


def is_vscode_set_tool(prefix: str, tool: str) -> bool:
    """Whether `prefix/tool` is a VS Code built-in quiver knows (tools moved between sets across releases)."""
    return is_toolset(prefix) and tool.lower() in VSCODE_TOOLS


def alias_names() -> list[str]:
    """The built-in aliases and their compatible names (`search`, `grep`, `Bash` lower-cased, ...)."""
    return sorted({*ALIASES, *_CANONICAL})


def known_names() -> list[str]:
    """Every built-in name, for did-you-mean suggestions."""
    return sorted({*ALIASES, *_CANONICAL, *VSCODE_TOOL_NAMES})


def vscode_toolset_of(name: str) -> str | None:
    """The alias of the tool set a VS Code tool or tool set belongs to (`runInTerminal` -> `execute`), or None."""
    low = name.lower()
    if low in ALIASES:
        return low
    for toolset, tools in VSCODE_TOOLSETS_TOOLS.items():
        if toolset.lower() == low or low in (t.lower() for t in tools):
            return toolset if toolset in ALIASES else _LEGACY_SETS.get(toolset)
    return None


# Legacy VS Code tool sets and the alias whose tools they hold.
_LEGACY_SETS: dict[str, str | None] = {
    "runCommands": "execute",
    "runTasks": "execute",
    "runNotebooks": "edit",
    "testing": "execute",
}
