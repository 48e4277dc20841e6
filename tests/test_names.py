from __future__ import annotations

from quiver.names import assign_names, claude_name, copilot_cli_name, quiver_name


def test_copilot_cli_names_replace_characters_and_cap_at_64() -> None:
    assert copilot_cli_name("my server", "fetch.v2") == "my-server-fetch-v2"
    assert copilot_cli_name("s@x", "t") == "s-x-t"
    assert len(copilot_cli_name("s" * 40, "t" * 40)) == 64


def test_colliding_names_get_a_numeric_suffix_within_the_cap() -> None:
    names = assign_names([("a", "b-c"), ("a-b", "c"), ("s" * 40, "t" * 40 + "1"), ("s" * 40, "t" * 40 + "2")])
    assert names[("a", "b-c")]["copilot_cli"] == "a-b-c"
    assert names[("a-b", "c")]["copilot_cli"] == "a-b-c2"
    long = [names[("s" * 40, "t" * 40 + s)]["copilot_cli"] for s in "12"]
    assert long[0] != long[1] and all(len(n) == 64 for n in long)


def test_claude_and_quiver_names() -> None:
    assert claude_name("notion", "notion-search") == "mcp__notion__notion-search"
    assert quiver_name("github", "search/issues") == "github__search-issues"
    assert quiver_name("ünï", "x").isascii()
