"""quiver.search: the tool search index (ranking, query analysis, near-duplicates, doc extraction)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from quiver._search._text import terms, words
from quiver.search import SearchConfig, SearchDoc, SearchIndex, docs_from_tools, semantic_available


def _doc(
    tool: str,
    description: str = "",
    server: str = "srv",
    *,
    params: tuple[tuple[str, str], ...] = (),
    server_description: str = "",
) -> SearchDoc:
    return SearchDoc(server, tool, description, params, server_description)


def _tools(index: SearchIndex, query: str, limit: int = 5) -> list[str]:
    return [h.tool for h in index.search(query, limit)]


def _catalog_docs(corpus: Path, *names: str) -> list[SearchDoc]:
    docs: list[SearchDoc] = []
    for name in names:
        cat = json.loads((corpus / "catalogs" / f"{name}.json").read_text(encoding="utf-8"))
        docs.extend(docs_from_tools(cat["server"], cat["tools"], cat["description"]))
    return docs


FILLER = [
    _doc("get_weather", "Current weather and forecast for a city"),
    _doc("send_email", "Send an email message to recipients"),
    _doc("list_issues", "List issues in a repository", server="github"),
    _doc("create_issue", "Open a new issue in a repository", server="github"),
    _doc("run_query", "Run a SQL query against the database", server="db"),
]


def test_identifiers_split_on_camel_case_snake_case_kebab_and_acronyms() -> None:
    assert words("getHTTPResponse2") == ["get", "http", "response", "2"]
    assert words("API-get-self snake_case") == ["api", "get", "self", "snake", "case"]
    assert terms("createDirectory") == terms("create_directory") == terms("create-directory")
    assert terms("create_directory")[:2] == terms("Create a directory")
    assert terms("browser_localStorage_get") == ["browser", "local", "storag", "get"]


def test_tools_named_in_any_case_style_are_found_by_their_words() -> None:
    styles = [
        _doc("createDirectory", server="a"),
        _doc("create_directory", server="b"),
        _doc("create-directory", server="c"),
    ]
    index = SearchIndex.build([*styles, *FILLER])
    hits = index.search("create a directory", 3)
    assert [(h.server, h.tool) for h in hits] == [
        ("a", "createDirectory"),
        ("b", "create_directory"),
        ("c", "create-directory"),
    ]
    assert hits[0].score == hits[1].score == hits[2].score
    assert hits[0].matched == ("name",)


def test_a_word_in_the_name_outranks_the_same_word_in_a_parameter_description() -> None:
    in_name = _doc("archive_project", "Store a project away", server="x")
    in_param = _doc("move_item", "Move an item", server="y", params=(("mode", "archive or keep the item"),))
    index = SearchIndex.build([in_param, in_name, *FILLER])
    hits = index.search("archive", 2)
    assert [h.tool for h in hits] == ["archive_project", "move_item"]
    assert hits[0].matched == ("name",) and hits[1].matched == ("params",)


def test_server_text_steers_between_tools_with_the_same_name() -> None:
    docs = [
        _doc("search", "Search for items", server="papers", server_description="Scientific articles and preprints"),
        _doc("search", "Search for items", server="shop", server_description="Products and prices of an online store"),
        *FILLER,
    ]
    index = SearchIndex.build(docs)
    assert [h.server for h in index.search("search scientific preprints", 2)] == ["papers", "shop"]
    assert [h.server for h in index.search("search products in the store", 2)] == ["shop", "papers"]
    assert "server" in index.search("search scientific preprints", 1)[0].matched


def test_a_misspelled_word_still_finds_the_tool_and_only_with_typo_tolerance_on() -> None:
    docs = [_doc("take_screenshot", "Take a screenshot of the current page"), *FILLER]
    assert _tools(SearchIndex.build(docs), "take a screnshot", 1) == ["take_screenshot"]
    assert _tools(SearchIndex.build(docs), "capture the pgae", 1) == ["take_screenshot"]
    strict = SearchConfig(query=replace(SearchConfig().query, typos=False, synonyms=False))
    assert _tools(SearchIndex.build(docs, config=strict), "screnshot pgae", 1) == []


def test_a_known_word_missing_from_the_catalog_is_not_corrected_into_another_word() -> None:
    index = SearchIndex.build([_doc("view_cart", "Show the shopping cart"), *FILLER])
    assert "view_cart" not in _tools(index, "draw a chart")  # `chart` is a word, not a typo of `cart`
    assert _tools(index, "view the crat", 1) == ["view_cart"]


def test_synonyms_connect_how_users_speak_to_how_descriptions_are_written() -> None:
    docs = [
        _doc("delete_directory", "Delete a directory and everything in it"),
        _doc("read_file", "Read the contents of a file"),
        _doc("take_screenshot", "Take a screenshot of the current page"),
        *FILLER,
    ]
    index = SearchIndex.build(docs)
    assert _tools(index, "remove this folder", 1) == ["delete_directory"]
    assert _tools(index, "open the document", 1) == ["read_file"]
    assert _tools(index, "grab a screen capture", 1) == ["take_screenshot"]
    plain = SearchIndex.build(docs, config=SearchConfig(query=replace(SearchConfig().query, synonyms=False)))
    assert _tools(plain, "remove this folder", 1) == []


def test_a_synonym_counts_less_than_the_word_itself() -> None:
    index = SearchIndex.build([_doc("remove_entry", "Remove an entry"), _doc("delete_entry", "Delete an entry")])
    assert _tools(index, "delete entry", 2) == ["delete_entry", "remove_entry"]
    assert _tools(index, "remove entry", 2) == ["remove_entry", "delete_entry"]


def test_words_run_together_or_split_apart_still_match() -> None:
    docs = [
        _doc("browser_localstorage_get", "Get a localStorage item by key"),
        _doc("read_text_file", "Read a file from the file system"),
        *FILLER,
    ]
    index = SearchIndex.build(docs)
    assert _tools(index, "get an item from local storage", 1) == ["browser_localstorage_get"]
    assert _tools(index, "read from the filesystem", 1) == ["read_text_file"]


def test_literal_values_count_by_their_shape_not_their_words() -> None:
    docs = [
        _doc("fetch", "Fetch a web page", params=(("url", "URL to fetch"),)),
        _doc("read_file", "Read a file", params=(("path", "Path of the file"),)),
        _doc("type_text", "Type text into an element", params=(("element", "Element to type into"),)),
        _doc("list_issues", "List issues of a project", server="github"),
        *FILLER,
    ]
    index = SearchIndex.build(docs)
    assert _tools(index, "get the page https://example.com/issues/list", 1) == ["fetch"]
    assert _tools(index, "show me ./issues/list.txt", 1) == ["read_file"]
    assert _tools(index, "put this text in #issue-list", 1) == ["type_text"]
    no_shapes = SearchIndex.build(docs, config=SearchConfig(query=replace(SearchConfig().query, shapes=False)))
    assert _tools(no_shapes, "get the page https://example.com/issues/list", 1) == ["list_issues"]


def test_results_are_deterministic_and_ties_break_by_server_then_tool() -> None:
    docs = [*(_doc("ping", "Check that the service answers", server=s) for s in ("zeta", "alpha", "mid")), *FILLER]
    first = SearchIndex.build(docs).search("ping the service")
    shuffled = list(docs)
    random.Random(3).shuffle(shuffled)
    assert SearchIndex.build(shuffled).search("ping the service") == first
    assert [h.server for h in first[:3]] == ["alpha", "mid", "zeta"]


def test_empty_or_unmatched_queries_and_zero_limits_return_nothing() -> None:
    index = SearchIndex.build(FILLER)
    assert index.search("") == []
    assert index.search("the of and") == []
    assert index.search("weather", limit=0) == []
    assert SearchIndex.build([]).search("anything") == []


def test_similar_finds_a_planted_near_duplicate_among_many_tools(corpus: Path) -> None:
    docs = _catalog_docs(corpus, "github", "playwright", "notion", "filesystem")
    rng = random.Random(5)
    words = sorted({w for d in docs for w in d.description.lower().split() if w.isalpha()})
    docs += [_doc(f"gen_{i}_{rng.choice(words)}", " ".join(rng.sample(words, 12)), server="gen") for i in range(800)]
    original = next(i for i, d in enumerate(docs) if d.tool == "list_pull_requests")
    docs.append(replace(docs[original], server="fork", tool="list_pull_requests_v2"))
    index = SearchIndex.build(docs)
    best, similarity = index.similar(original, 3)[0]
    assert docs[best].tool == "list_pull_requests_v2" and 0.6 <= similarity <= 1.0
    assert all(0.0 <= s <= 1.0 for _, s in index.similar(original, 5))
    assert index.similar(len(docs) - 1, 1)[0][0] == original


def test_similar_pairs_the_deprecated_tool_with_its_replacement_in_a_real_catalog(corpus: Path) -> None:
    docs = _catalog_docs(corpus, "filesystem", "github", "git")
    index = SearchIndex.build(docs)
    read_file = next(i for i, d in enumerate(docs) if d.tool == "read_file")
    assert docs[index.similar(read_file, 1)[0][0]].tool == "read_text_file"


def test_docs_from_tools_reads_names_descriptions_and_parameters_of_a_real_catalog(corpus: Path) -> None:
    cat = json.loads((corpus / "catalogs" / "filesystem.json").read_text(encoding="utf-8"))
    docs = docs_from_tools(cat["server"], cat["tools"], cat["description"])
    assert [d.tool for d in docs] == [t["name"] for t in cat["tools"]]
    write = next(d for d in docs if d.tool == "write_file")
    assert write.server == "filesystem" and write.server_description == cat["description"]
    assert write.description.startswith("Create a new file")
    assert [name for name, _ in write.params] == ["path", "content"]
    allowed = next(d for d in docs if d.tool == "list_allowed_directories")
    assert allowed.params == ()


def test_docs_from_tools_tolerates_missing_and_malformed_fields() -> None:
    tools: list[dict[str, Any]] = [
        {"name": "a"},
        {"name": "b", "description": None, "inputSchema": {"properties": {"x": {"type": "string"}}}},
    ]
    docs = docs_from_tools("s", tools)
    assert docs == [_doc("a", server="s"), _doc("b", server="s", params=(("x", ""),))]


def test_the_index_ranks_most_dev_queries_high_over_the_real_catalogs(corpus: Path) -> None:
    docs = _catalog_docs(corpus, *sorted(p.stem for p in (corpus / "catalogs").glob("*.json")))
    index = SearchIndex.build(docs)
    rows = [json.loads(line) for line in (corpus / "queries-dev.jsonl").read_text().splitlines() if line]
    found = sum((r["server"], r["tool"]) in [(h.server, h.tool) for h in index.search(r["query"], 5)] for r in rows)
    assert found / len(rows) >= 0.9  # loose: bench/search.py measures the real figures


def test_importing_the_search_module_loads_neither_numpy_nor_rapidfuzz() -> None:
    heavy = "{'numpy', 'rapidfuzz', 'tokenizers', 'onnxruntime', 'quiver._search._embed', 'quiver._search._fuse'}"
    code = f"import sys, quiver.search; print(sorted({heavy} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_embedding_vectors_fuse_with_the_lexical_ranking() -> None:
    from quiver.search import doc_vectors

    assert semantic_available(), "the embedding model is a regular dependency: pip install -e ."
    docs = [_doc("get_forecast", "Weather forecast for a city"), _doc("send_email", "Send an email message")]
    vectors = doc_vectors(docs)
    assert len(vectors) == 2 and abs(sum(x * x for x in vectors[0][0]) - 1.0) < 1e-4
    index = SearchIndex.build(docs, vectors=vectors)
    assert _tools(index, "will it rain tomorrow in Oslo", 1) == ["get_forecast"]
    with pytest.raises(ValueError, match="vectors for 1 docs, 2 docs"):
        SearchIndex.build(docs, vectors=vectors[:1])


@pytest.mark.parametrize(
    ("query", "want"),
    [
        ("git_log", [("git", "git_log")]),
        ("GitHub/List_Commits", [("github", "list_commits")]),
        ("github__issue_write", [("github", "issue_write")]),
        ("mcp__notion__API-post-page", [("notion", "API-post-page")]),
        ("`read_file`", [("desktop-commander", "read_file"), ("filesystem", "read_file")]),
    ],
)
def test_a_query_that_is_a_tool_name_ranks_that_tool_first(
    corpus: Path, query: str, want: list[tuple[str, str]]
) -> None:
    docs = _catalog_docs(corpus, "git", "github", "notion", "filesystem")
    live = json.loads((corpus / "catalogs-livemcpbench" / "desktop-commander.json").read_text(encoding="utf-8"))
    docs += docs_from_tools(live["server"], live["tools"], live["description"])
    index = SearchIndex.build(docs)
    assert [(h.server, h.tool) for h in index.search(query, len(want) + 2)][: len(want)] == want
    named = next(i for i, d in enumerate(docs) if (d.server, d.tool) == want[0])
    assert index.rank_of(query, named, 3) == 1


def test_a_tool_named_exactly_is_returned_even_when_no_word_of_it_is_indexed() -> None:
    index = SearchIndex.build([_doc("x9", ""), *FILLER])
    assert _tools(index, "srv/x9", 2)[0] == "x9"
    assert index.exact("srv/x10") == () and index.exact(" SRV/X9 ") == (0,)


def test_the_shipped_tokenizer_is_upstreams_file_byte_for_byte() -> None:
    import gzip
    import hashlib

    from quiver._search import _embed_id

    data = Path(_embed_id.__file__).with_name("data")
    raw = gzip.decompress((data / "minilm-tokenizer.json.gz").read_bytes())
    assert hashlib.sha256(raw).hexdigest() == _embed_id.TOKENIZER_SHA256
