"""A small note-taking MCP server over stdio: quiver's test upstream for snapshot and drift.

Built on the low-level `mcp.server.Server` so the exact Tool objects and the tools/list pagination
are ours. Run it as `python examples/servers/notes_server.py`; stdout carries only the protocol, logs
go to stderr.

Environment knobs:
    NOTES_DB              path of a JSON file holding the notes (default: in memory, per process)
    NOTES_PAGE_SIZE       tools per tools/list page (default 2), so clients must follow `nextCursor`
    NOTES_SCHEMA_VARIANT  "2" adds a required `folder` property to `create_note` (schema drift)
    NOTES_CURSOR_LOOP     "1" makes the last page point back at the second page (a cursor loop)
    NOTES_LOG_LEVEL       level of this server's stderr log (default INFO)
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import mcp.types as types
from mcp import MCPError
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

logger = logging.getLogger("notes_server")

SERVER_NAME = "notes"
SERVER_VERSION = "1.0.0"
INSTRUCTIONS = (
    "A personal note store. Use search_notes or list_notes to find a note's id before get_note, "
    "update_note or delete_note. Notes have a title, a body and optional tags."
)
DEFAULT_PAGE_SIZE = 2

JSON = dict[str, Any]

_NOTE_SCHEMA: JSON = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "description": "Stable note id, such as `n1`."},
        "title": {"type": "string"},
        "body": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "folder": {"type": "string"},
    },
    "required": ["id", "title", "body", "tags"],
}
_SUMMARY_SCHEMA: JSON = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "title": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["id", "title", "tags"],
}
_SUMMARIES_SCHEMA: JSON = {
    "type": "object",
    "properties": {"notes": {"type": "array", "items": _SUMMARY_SCHEMA}},
    "required": ["notes"],
}
_ID_PROPERTY: JSON = {
    "type": "string",
    "description": "Id of the note, as returned by list_notes or search_notes.",
}
_TAGS_PROPERTY: JSON = {
    "type": "array",
    "items": {"type": "string", "minLength": 1},
    "description": "Labels for grouping notes, such as `work` or `ideas`.",
}


def build_tools(variant: str) -> list[types.Tool]:
    """The server's catalog, in tools/list order; `variant` "2" is the drifted schema."""
    create_properties: JSON = {
        "title": {"type": "string", "minLength": 1, "description": "Short title shown in listings."},
        "body": {"type": "string", "description": "Full text of the note (plain text or Markdown)."},
        "tags": _TAGS_PROPERTY,
    }
    create_required = ["title", "body"]
    if variant == "2":
        create_properties["folder"] = {"type": "string", "description": "Folder to file the note under."}
        create_required.append("folder")
    return [
        types.Tool(
            name="list_notes",
            title="List notes",
            description="List notes, newest first, optionally only those with a tag. Returns ids and titles.",
            input_schema={
                "type": "object",
                "properties": {
                    "tag": {"type": "string", "description": "Only return notes carrying this tag."},
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": 100,
                        "default": 20,
                        "description": "Maximum number of notes to return.",
                    },
                },
                "required": [],
                "additionalProperties": False,
            },
            output_schema=_SUMMARIES_SCHEMA,
            annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
        ),
        types.Tool(
            name="get_note",
            title="Get a note",
            description="Fetch one note by id, with its full body and tags.",
            input_schema={
                "type": "object",
                "properties": {"id": _ID_PROPERTY},
                "required": ["id"],
                "additionalProperties": False,
            },
            output_schema=_NOTE_SCHEMA,
            annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
        ),
        types.Tool(
            name="search_notes",
            title="Search notes",
            description="Find notes whose title or body contains the query text (case-insensitive).",
            input_schema={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "minLength": 1, "description": "Text to look for."},
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": 100,
                        "default": 10,
                        "description": "Maximum number of matches to return.",
                    },
                },
                "required": ["query"],
                "additionalProperties": False,
            },
            output_schema=_SUMMARIES_SCHEMA,
            annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
        ),
        types.Tool(
            name="create_note",
            title="Create a note",
            description="Create a new note. Each call creates another note, even with the same title.",
            input_schema={
                "type": "object",
                "properties": create_properties,
                "required": create_required,
                "additionalProperties": False,
            },
            output_schema=_NOTE_SCHEMA,
            annotations=types.ToolAnnotations(
                read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
            ),
        ),
        types.Tool(
            name="update_note",
            title="Update a note",
            description="Replace the title, body or tags of a note; fields left out stay as they are.",
            input_schema={
                "type": "object",
                "properties": {
                    "id": _ID_PROPERTY,
                    "title": {"type": "string", "minLength": 1, "description": "New title."},
                    "body": {"type": "string", "description": "New body text."},
                    "tags": _TAGS_PROPERTY,
                },
                "required": ["id"],
                "additionalProperties": False,
            },
            output_schema=_NOTE_SCHEMA,
            annotations=types.ToolAnnotations(
                read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
            ),
        ),
        types.Tool(
            name="delete_note",
            title="Delete a note",
            description="Delete a note permanently. This cannot be undone.",
            input_schema={
                "type": "object",
                "properties": {"id": _ID_PROPERTY},
                "required": ["id"],
                "additionalProperties": False,
            },
            annotations=types.ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False),
        ),
    ]


class NoteStore:
    """Notes in memory, or in a JSON file re-read on every operation so several processes agree."""

    def __init__(self, path: Path | None) -> None:
        self._path = path
        self._state: JSON = {"next_id": 1, "notes": []}

    def _load(self) -> JSON:
        if self._path is None or not self._path.exists():
            return self._state
        with self._path.open(encoding="utf-8") as f:
            state: JSON = json.load(f)
        return state

    def _save(self, state: JSON) -> None:
        self._state = state
        if self._path is None:
            return
        tmp = self._path.with_name(self._path.name + ".tmp")
        tmp.write_text(json.dumps(state, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, self._path)

    def notes(self) -> list[JSON]:
        """All notes, newest first."""
        notes: list[JSON] = self._load()["notes"]
        return list(reversed(notes))

    def get(self, note_id: str) -> JSON | None:
        return next((n for n in self._load()["notes"] if n["id"] == note_id), None)

    def create(self, fields: Mapping[str, Any]) -> JSON:
        state = self._load()
        note: JSON = {"id": f"n{state['next_id']}", "tags": [], **fields}
        state["next_id"] += 1
        state["notes"].append(note)
        self._save(state)
        return note

    def update(self, note_id: str, fields: Mapping[str, Any]) -> JSON | None:
        state = self._load()
        for note in state["notes"]:
            if note["id"] == note_id:
                note.update(fields)
                self._save(state)
                return dict(note)
        return None

    def delete(self, note_id: str) -> bool:
        state = self._load()
        kept = [n for n in state["notes"] if n["id"] != note_id]
        if len(kept) == len(state["notes"]):
            return False
        state["notes"] = kept
        self._save(state)
        return True


def _summary(note: JSON) -> JSON:
    return {"id": note["id"], "title": note["title"], "tags": note.get("tags", [])}


def _ok(structured: JSON) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(text=json.dumps(structured, sort_keys=True))],
        structured_content=structured,
    )


def _tool_error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)


def _encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(json.dumps({"offset": offset}).encode()).decode()


def _decode_cursor(cursor: str) -> int:
    try:
        offset = json.loads(base64.urlsafe_b64decode(cursor.encode()))["offset"]
    except (binascii.Error, ValueError, KeyError, TypeError) as exc:
        raise MCPError(types.INVALID_PARAMS, f"invalid cursor {cursor!r}") from exc
    if not isinstance(offset, int) or offset < 0:
        raise MCPError(types.INVALID_PARAMS, f"invalid cursor {cursor!r}")
    return offset


def build_server(env: Mapping[str, str]) -> Server[Any]:
    """The notes server, configured from `env` (see the module docstring)."""
    tools = build_tools(env.get("NOTES_SCHEMA_VARIANT", "1"))
    by_name = {tool.name: tool for tool in tools}
    page_size = max(1, int(env.get("NOTES_PAGE_SIZE", str(DEFAULT_PAGE_SIZE))))
    cursor_loop = env.get("NOTES_CURSOR_LOOP") == "1"
    db = env.get("NOTES_DB")
    store = NoteStore(Path(db) if db else None)

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        offset = _decode_cursor(params.cursor) if params and params.cursor else 0
        end = offset + page_size
        next_cursor = _encode_cursor(end) if end < len(tools) else None
        if next_cursor is None and cursor_loop and len(tools) > page_size:
            next_cursor = _encode_cursor(page_size)
        return types.ListToolsResult(tools=tools[offset:end], next_cursor=next_cursor)

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        tool = by_name.get(params.name)
        if tool is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        args = dict(params.arguments or {})
        error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(tool.input_schema).iter_errors(args))
        if error is not None:
            return _tool_error(f"invalid arguments for {tool.name}: {error.message}")
        logger.info("tools/call %s", tool.name)
        return _dispatch(store, tool.name, args)

    return Server(
        SERVER_NAME,
        version=SERVER_VERSION,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _dispatch(store: NoteStore, name: str, args: JSON) -> types.CallToolResult:
    if name == "list_notes":
        notes = [n for n in store.notes() if "tag" not in args or args["tag"] in n.get("tags", [])]
        return _ok({"notes": [_summary(n) for n in notes[: args.get("limit", 20)]]})
    if name == "search_notes":
        query = args["query"].casefold()
        hits = [n for n in store.notes() if query in n["title"].casefold() or query in n["body"].casefold()]
        return _ok({"notes": [_summary(n) for n in hits[: args.get("limit", 10)]]})
    if name == "create_note":
        return _ok(store.create(args))
    note_id = args["id"]
    if name == "get_note":
        note = store.get(note_id)
    elif name == "update_note":
        note = store.update(note_id, {k: v for k, v in args.items() if k != "id"})
    else:  # delete_note
        if not store.delete(note_id):
            return _tool_error(f"no note with id {note_id!r}")
        return types.CallToolResult(content=[types.TextContent(text=f"deleted note {note_id}")])
    if note is None:
        return _tool_error(f"no note with id {note_id!r}")
    return _ok(note)


async def serve(env: Mapping[str, str]) -> None:
    server = build_server(env)
    async with stdio_server() as (read_stream, write_stream):
        logger.info("notes server ready on stdio")
        await server.run(read_stream, write_stream, server.create_initialization_options())


def main() -> None:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(name)s: %(message)s")
    logger.setLevel(os.environ.get("NOTES_LOG_LEVEL", "INFO").upper())
    anyio.run(serve, dict(os.environ))


if __name__ == "__main__":
    main()
