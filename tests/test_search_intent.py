"""Ranking signals beyond words: action class, name cover, topic phrases, example values, numbers, servers.

Each ranking test builds a small synthetic catalog, shows the signal switched off ranking another tool
first, and the shipped configuration ranking the fitting tool first (lexical index: no model needed).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from quiver._search import _intent
from quiver._search._query import analyze, topic_start
from quiver._search._text import stem, without_examples
from quiver.search import SearchConfig, SearchDoc, SearchIndex, docs_from_tools

OFF = SearchConfig(intent_weight=0.0, name_weight=0.0, server_weight=0.0, numbers_weight=0.0)


def _first(docs: list[SearchDoc], query: str, config: SearchConfig | None = None) -> str:
    hits = SearchIndex.build(docs, config=config).search(query, 3)
    return f"{hits[0].server}/{hits[0].tool}"


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("open a ticket for the crash", "make"),
        ("open the config file", "read"),
        ("please file a report on the outage", "make"),
        ("remember that the meeting moved", "make"),
        ("what is the weather in Oslo", "read"),
        ("how many tickets are open", "read"),
        ("can you delete the old branch", "remove"),
        ("find tickets mentioning crashes", "find"),
        ("convert the price to euros", "convert"),
        ("the build is red", None),
    ],
)
def test_query_class_reads_the_leading_verb_and_its_article(query: str, expected: str | None) -> None:
    assert _intent.query_class(query) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("create_ticket", "make"),
        ("ticket_write", "make"),
        ("sub_ticket_write", "make"),
        ("getWeather", "read"),
        ("search_tickets", "find"),
        ("delete-branch", "remove"),
        ("ui_click", None),
    ],
)
def test_tool_class_reads_the_name_verb(name: str, expected: str | None) -> None:
    assert _intent.tool_class(name) == expected


def test_agreement_rewards_the_same_class_and_penalises_a_contradiction_only() -> None:
    assert _intent.agreement("make", "make") == 1
    assert _intent.agreement("make", "read") == -1
    assert _intent.agreement("find", "read") == 0  # neighbours
    assert _intent.agreement("read", "convert") == 0
    assert _intent.agreement(None, "read") == 0
    assert _intent.agreement("read", None) == 0


TRACKER = [
    SearchDoc("tracker", "ticket_read", "Get details of one ticket: open it by its number."),
    SearchDoc("tracker", "ticket_write", "Create or update a ticket in the tracker."),
    SearchDoc("tracker", "search_tickets", "Search tickets by text."),
]


def test_a_make_request_ranks_the_write_tool_over_the_read_ones() -> None:
    query = "open a ticket for the crash"
    assert _first(TRACKER, query, replace(OFF, query=replace(OFF.query, topics=False))) == "tracker/ticket_read"
    assert _first(TRACKER, query) == "tracker/ticket_write"
    # "open" without an article keeps its reading sense
    assert _first(TRACKER, "open ticket 42") == "tracker/ticket_read"


def test_open_with_an_article_takes_the_synonyms_of_create() -> None:
    index = SearchIndex.build(
        [SearchDoc("s", "make_page", "Create a page."), SearchDoc("s", "read_page", "Read a page.")]
    )
    concepts = analyze("open a page", index._postings, (), SearchConfig().query)
    opened = next(c for c in concepts if "open" in c.terms or "creat" in c.terms)
    assert "creat" in opened.terms and "read" not in opened.terms
    concepts = analyze("open the page", index._postings, (), SearchConfig().query)
    assert any("read" in c.terms for c in concepts)


POINTER = [
    SearchDoc(
        "ui",
        "ui_pointer_click_xy",
        "Click the pointer button at a position",
        (("x", ""), ("y", "")),
        required_numbers=2,
    ),
    SearchDoc("ui", "ui_pointer_down", "Press the pointer button down", (("button", "which button"),)),
    SearchDoc("ui", "ui_click", "Click an element on the page", (("target", "the button or link to click"),)),
    SearchDoc("ui", "ui_type", "Type text into an element"),
    SearchDoc("ui", "ui_hover", "Hover over an element"),
    SearchDoc("ui", "ui_scroll", "Scroll the page"),
]


def test_the_general_tool_wins_when_the_request_gives_no_specifics() -> None:
    query = "click the save button"
    assert _first(POINTER, query, OFF) != "ui/ui_click"
    assert _first(POINTER, query) == "ui/ui_click"
    # with the numbers given, the coordinates tool is not held back
    assert _first(POINTER, "click the pointer at 120, 340") == "ui/ui_pointer_click_xy"


def test_name_cover_counts_only_the_distinctive_name_words() -> None:
    names = _intent.distinctive_names(["ui"] * len(POINTER), [d.tool for d in POINTER])
    assert names[2] == frozenset({"click"})  # `ui` is the server's name
    assert _intent.name_cover(names[2], {"click": 1.0}) == 1.0
    assert _intent.name_cover(names[0], {"click": 1.0}) == pytest.approx(1 / 3)  # pointer, click, xy
    assert _intent.name_cover(frozenset(), {"click": 1.0}) == 0.0


def test_a_tool_requiring_numbers_loses_only_when_the_request_has_none() -> None:
    docs = [
        SearchDoc("ui", "ui_pointer_click_xy", "Click the pointer button at a position", required_numbers=2),
        SearchDoc("ui", "ui_tap", "Tap a labelled control"),
    ]
    config = replace(OFF, numbers_weight=2.0)  # two docs: the unit is the whole gap between them
    assert _first(docs, "click the pointer button", OFF) == "ui/ui_pointer_click_xy"
    assert _first(docs, "click the pointer button", config) == "ui/ui_tap"
    assert _first(docs, "click the pointer button at 10 20", config) == "ui/ui_pointer_click_xy"


def test_docs_from_tools_counts_required_numeric_parameters() -> None:
    tool = {
        "name": "move",
        "inputSchema": {
            "type": "object",
            "properties": {"x": {"type": "number"}, "y": {"type": ["integer", "null"]}, "label": {"type": "string"}},
            "required": ["x", "y", "label"],
        },
    }
    assert docs_from_tools("ui", [tool])[0].required_numbers == 2
    assert docs_from_tools("ui", [{"name": "t", "inputSchema": {"type": "object"}}])[0].required_numbers == 0


@pytest.mark.parametrize(
    ("query", "topic"),
    [
        ("search the web for the newest compiler release", "the newest compiler release"),
        ("write a ticket about the flaky login test", "the flaky login test"),
        ("remember that dana leads the infra team", "dana leads the infra team"),
        ("raise a ticket that the docs are stale", "the docs are stale"),
        ("search for tickets", None),  # "for" right after the verb: what is searched is the tool's object
        ("about the page", None),  # nothing asked before "about"
        ("list files", None),
    ],
)
def test_topic_phrases(query: str, topic: str | None) -> None:
    cut = topic_start(query)
    assert (None if cut is None else query[cut:].strip()) == topic


def test_a_topic_phrase_does_not_outweigh_the_domain_the_request_names() -> None:
    docs = [
        SearchDoc("web", "web_search", "Search the web for current information."),
        SearchDoc("code", "get_newest_compiler_release", "Get the newest compiler release of a repository."),
    ]
    query = "search the web for the newest compiler release"
    assert (
        _first(docs, query, replace(OFF, query=replace(OFF.query, topics=False))) == "code/get_newest_compiler_release"
    )
    assert _first(docs, query, replace(OFF)) == "web/web_search"


def test_example_values_in_parameter_descriptions_are_not_indexed() -> None:
    assert "Lisbon" not in without_examples("IANA zone name (e.g., 'Europe/Lisbon', 'Asia/Seoul'). Use 'UTC'")
    assert "zone name" in without_examples("IANA zone name (e.g., 'Europe/Lisbon')")
    assert without_examples("the path, e.g. 'src/app.py' or 'lib/x.py'").strip() == "the path,"
    docs = [
        SearchDoc("clock", "now", "Current time in a zone", (("zone", "IANA name (e.g., 'Europe/Paris')"),)),
        SearchDoc(
            "clock",
            "shift",
            "Shift a time from one zone to another",
            (("target", "IANA name (e.g., 'Europe/Lisbon')"),),
        ),
    ]
    query = "what is the time in Lisbon"
    assert _first(docs, query, replace(OFF, param_examples=True)) == "clock/shift"
    assert _first(docs, query, OFF) == "clock/now"


def test_a_request_naming_a_server_prefers_its_tools() -> None:
    docs = [
        SearchDoc("wiki", "lookup_article", "Look up an article by title."),
        SearchDoc("websearch", "search", "Search for pages and documents."),
    ]
    query = "search the wiki for onboarding pages"
    assert _first(docs, query, OFF) == "websearch/search"
    assert _first(docs, query, replace(OFF, server_weight=1.5)) == "wiki/lookup_article"  # unit: the whole gap


@pytest.mark.parametrize(
    ("query", "dropped", "kept"),
    [
        ("tell me about Ada Lovelace", {"tell"}, {"ada", "lovelace"}),
        ("give us the open invoices", {"give"}, {"invoice"}),
        ("tell the team the build is red", set(), {"tell", "team"}),  # not framing: "tell" has its own object
        ("give a talk summary", set(), {"give"}),
    ],
)
def test_framing_verbs_before_me_or_us_are_not_terms(query: str, dropped: set[str], kept: set[str]) -> None:
    said = ("tell", "give", "ada", "lovelace", "invoice", "team", "open", "build", "red", "talk", "summary")
    vocabulary = {stem(w) for w in said}
    terms = {t for c in analyze(query, vocabulary, (), SearchConfig().query) for t in c.terms}
    assert not {stem(w) for w in dropped} & terms
    assert {stem(w) for w in kept} <= terms


def test_a_framing_verb_does_not_match_a_tool_that_uses_it_in_another_sense() -> None:
    docs = [
        SearchDoc("auth", "auth_test", "Checks authentication and tells you who you are."),
        SearchDoc("wiki", "get_article", "Get the Wikipedia article on a subject."),
    ]
    query = "tell me about the wikipedia article on Ada Lovelace"
    framed_off = replace(OFF, query=replace(OFF.query, framing=False))
    assert SearchIndex.build(docs, config=framed_off).search(query, 2)[0].tool == "auth_test"
    hits = SearchIndex.build(docs, config=OFF).search(query, 2)
    assert [h.tool for h in hits] == ["get_article"]
