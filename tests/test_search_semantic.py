"""Semantic tool search: the query-analysis fixes, the vector cache, the fused ranking, and where it is wired in
(`quiver search`, `route-test`, `explain`, lint staying free of the model, cold or warm,
the ROUTE rules' embedding similarity)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from quiver._search import _text
from quiver._search._query import QueryOptions, analyze
from quiver._search._scope import warm_project
from quiver._search._similar import first_clause, paraphrases, purpose_text, semantic_similarity
from quiver._search._vectors import VectorCache
from quiver.commands.explain import explain_agent as explain
from quiver.commands.search import search_tools as search
from quiver.errors import InputErrors
from quiver.lint.engine import LintContext, run_checks
from quiver.lint.registry import rules_of
from quiver.project import load_project
from quiver.resolve import resolve_project
from quiver.search import SearchConfig, SearchDoc, SearchIndex, build_index, doc_vectors, embed_texts
from test_search import _catalog_docs

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("numpy", "onnxruntime", "tokenizers", "quiver._search._embed", "quiver._search._fuse")


_docs = _catalog_docs


def _concepts(query: str, vocabulary: set[str]) -> list[dict[str, float]]:
    typo_candidates = tuple(sorted(t for t in vocabulary if len(t) >= 4))
    return [c.terms for c in analyze(query, vocabulary, typo_candidates, QueryOptions())]


# ---------------------------------------------------------------------------------------------------------
# Query analysis


def test_plural_acronyms_stay_whole_words() -> None:
    assert _text.words("list my open PRs") == ["list", "my", "open", "pr"]
    assert _text.words("check these URLs and IDs, then the PDFs") == [
        "check", "these", "url", "and", "id", "then", "the", "pdf",
    ]  # fmt: skip
    assert _text.words("getHTTPResponse listPRs") == ["get", "http", "response", "list", "pr"]


def test_repository_slugs_are_told_apart_from_paths() -> None:
    shapes = {text: shape for text, kind, shape in _text.query_chunks(
        "issues in octo-org/shop and vercel/next.js, then docs/old.md, ./src/app.py and src/main.js"
    ) if kind == "value"}  # fmt: skip
    assert shapes == {
        "octo-org/shop": "repository",
        "vercel/next.js": "repository",
        "docs/old.md": "file",
        "./src/app.py": "file",
        "src/main.js": "file",
    }
    vocabulary = {"repositori", "path", "file", "issu", "shop"}
    asked = [t for c in _concepts("issues in octo-org/shop", vocabulary) for t in c]
    assert "repositori" in asked and "path" not in asked and "file" not in asked


def test_a_dictionary_word_is_never_corrected_but_a_typo_still_is() -> None:
    vocabulary = {"star", "repositori", "search", "cach"}
    assert _concepts("stale caches", vocabulary) == [{"cach": 1.0}]  # `stale` is a word, not a typo of `star`
    assert _concepts("serach repos", vocabulary)[0] == {"search": pytest.approx(0.8 * (1 - 1 / 7))}


def test_an_inflection_weighs_less_than_the_word_said(corpus: Path) -> None:
    assert _concepts("the bug I filed", {"file", "bug"}) == [{"bug": 1.0}, {"file": 0.35}]
    assert _concepts("save the file", {"file", "save"}) == [{"save": 1.0}, {"file": 1.0}]
    docs = _docs(corpus, "filesystem", "github")
    query = "the issue I filed last week"
    same_class = SearchConfig(query=replace(QueryOptions(), inflection_weight=1.0))
    before = [h.tool for h in SearchIndex.build(docs, config=same_class).search(query, 3)]
    after = [h.tool for h in SearchIndex.build(docs).search(query, 3)]
    # the top two only: issue tools that need an issue number (the request gives none) now rank a little lower,
    # and a file tool can come third
    assert before[:2] == ["read_text_file", "read_file"] and not any("file" in t for t in after[:2]), (before, after)


# ---------------------------------------------------------------------------------------------------------
# Vectors, cache and fusion


def test_vectors_are_cached_per_text_and_model_and_an_unchanged_tool_is_never_encoded_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from quiver._search import _embed, _vectors

    monkeypatch.delenv("QUIVER_NO_CACHE", raising=False)
    monkeypatch.setattr(_vectors, "_MEMO", {})  # this process's memo would hide the encodes counted here
    encoded: list[str] = []

    def counting(texts: list[str]) -> list[tuple[float, ...]]:
        encoded.extend(texts)
        return _embed.encode(texts)

    docs = [
        SearchDoc("srv", "get_forecast", "Weather forecast for a city"),
        SearchDoc("srv", "send_email", "Send mail"),
    ]
    first = VectorCache(tmp_path)
    vectors = first.vectors([t for d in docs for t in embed_texts(d)], counting)
    assert first.save() and len(encoded) == 2
    path = tmp_path / ".quiver" / "cache" / "vectors" / f"{first.model_id}.f32"
    assert path.is_file()
    again = VectorCache(tmp_path)
    assert again.vectors([t for d in docs for t in embed_texts(d)], counting) == vectors and len(encoded) == 2
    changed = SearchDoc("srv", "send_email", "Send an e-mail to a list of recipients")
    again.vectors([t for d in (docs[0], changed) for t in embed_texts(d)], counting)
    assert encoded[2:] == embed_texts(changed)
    assert abs(sum(x * x for x in vectors[0] or ()) - 1.0) < 1e-4


def test_a_corrupt_or_foreign_cache_file_is_ignored(tmp_path: Path) -> None:
    cache = VectorCache(tmp_path)
    assert cache.path is not None
    cache.path.parent.mkdir(parents=True)
    cache.path.write_bytes(b"quiver-vectors 1\n{not json\n\x00\x01")
    assert len(VectorCache(tmp_path)) == 0
    cache.path.write_bytes(b"something else entirely")
    assert len(VectorCache(tmp_path)) == 0


def test_the_fused_ranking_finds_what_words_alone_miss_and_ties_break_by_name(corpus: Path) -> None:
    docs = _docs(corpus, "filesystem", "github", "git", "time")
    lexical, fused = SearchIndex.build(docs), build_index(docs)
    assert fused.semantic and not lexical.semantic
    query = "how late is it in Sydney"  # no word of it is in the index
    assert lexical.search(query, 1) == [] and [h.tool for h in fused.search(query, 1)] == ["get_current_time"]
    twins = [
        SearchDoc("b", "lookup", "Find a word in the dictionary"),
        SearchDoc("a", "lookup", "Find a word in the dictionary"),
    ]
    same = doc_vectors(twins[:1]) * 2
    index = SearchIndex.build(twins, vectors=same)
    hits = index.search("dictionary word", 2)
    assert [h.server for h in hits] == ["a", "b"] and hits[0].score == hits[1].score
    assert index.search("zzqx vvkq", 5) == []


def test_examples_are_their_own_field_and_reach_the_embedding() -> None:
    docs = [
        SearchDoc("gist", "create_gist", "Create a new gist", examples=("save a snippet as a private paste",)),
        SearchDoc("fs", "write_file", "Write text to a file"),
    ]
    assert embed_texts(docs[0])[1] == "save a snippet as a private paste"
    hit = build_index(docs).search("keep this code snippet as a private paste", 1)[0]
    assert (hit.tool, "examples" in hit.matched) == ("create_gist", True)
    assert "examples" not in build_index(docs[1:]).search("write a file", 1)[0].matched


# ---------------------------------------------------------------------------------------------------------
# Commands and config


def _configure(demo: Path, text: str) -> None:
    """Top-level keys go first (the demo's config ends in `[[mcp_servers]]` tables), tables last."""
    path = demo / "quiver.toml"
    old = path.read_text(encoding="utf-8")
    path.write_text(old + "\n" + text if text.startswith("[") else text + old, encoding="utf-8")


def test_lexical_search_comes_from_the_flag_or_the_config(demo: Path) -> None:
    query = "see which version was shipped most recently"
    semantic = json.loads(search(demo, query, None, 5, "json"))
    lexical = json.loads(search(demo, query, None, 5, "json", lexical=True))
    assert semantic != lexical
    _configure(demo, 'search = "lexical"\n')
    assert json.loads(search(demo, query, None, 5, "json")) == lexical


def test_a_bad_search_mode_or_bad_examples_are_config_errors(demo: Path) -> None:
    _configure(demo, 'search = "fuzzy"\n')
    with pytest.raises(InputErrors, match='`search` must be "semantic" or "lexical"'):
        load_project(demo)
    (demo / "quiver.toml").write_text('[tools."github/create_gist"]\nexamples = "paste"\n', encoding="utf-8")
    with pytest.raises(InputErrors, match="examples` must be a list of non-empty strings"):
        load_project(demo)


def test_configured_examples_are_searched_and_shown_by_explain_but_route_cases_never_are(demo: Path) -> None:
    example = "jot down a paste of my shell history"
    _configure(demo, f'[tools."github/create_gist"]\nexamples = ["{example}"]\ntimeout_ms = 5000\n')
    (demo / ".quiver").mkdir(exist_ok=True)
    (demo / ".quiver" / "routes.yaml").write_text(
        "- query: archive my terminal scrollback\n  expect: github/create_gist\n", encoding="utf-8"
    )
    project = load_project(demo)
    assert project.config.tools["github/create_gist"] == {"timeout_ms": 5000}  # examples are not policy
    rows = json.loads(search(demo, example, None, 1, "json"))
    assert (rows[0]["tool"], "examples" in rows[0]["matched"]) == ("create_gist", True)
    from quiver._search._scope import project_docs

    examples = {d.tool: d.examples for d in project_docs(project) if d.examples}
    assert examples == {"create_gist": (example,)}  # the route case's query is not an example
    agent = next(r.agent.id for r in resolve_project(project) if r.tool("github", "create_gist") is not None)
    assert f'search examples of github/create_gist: "{example}"' in explain(demo, agent, "create_gist")


def test_lint_never_imports_embedding_code_and_its_findings_ignore_the_vector_cache(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("QUIVER_NO_CACHE", raising=False)
    env = dict(os.environ)
    shutil.rmtree(demo / ".quiver" / "cache", ignore_errors=True)
    cold = _lint_modules(demo, env)  # no cache: lint reads the lock's vectors, it does not encode
    assert cold == [], cold
    shutil.rmtree(demo / ".quiver" / "cache", ignore_errors=True)
    cold_report = _lint_report(demo, env)
    assert "ROUTE001" in cold_report  # the lock's vectors are read: the pair rules have something to say
    assert warm_project(load_project(demo)) > 0  # every text a search encodes: the vector cache is now warm
    assert list((demo / ".quiver" / "cache" / "vectors").glob("*.f32"))
    assert _lint_modules(demo, env) == []
    assert _lint_report(demo, env) == cold_report  # the findings do not depend on the cache


def _lint_report(root: Path, env: dict[str, str]) -> str:
    args = [sys.executable, "-m", "quiver", "lint", "--format", "json", "--fail-on", "never", "--project", str(root)]
    return subprocess.run(args, env=env, capture_output=True, text=True, check=True).stdout


def _lint_modules(root: Path, env: dict[str, str]) -> list[str]:
    code = (
        "import atexit, sys\n"
        f"heavy = {HEAVY!r}\n"
        "atexit.register(lambda: print('MODULES', sorted(m for m in sys.modules if m in heavy), file=sys.stderr))\n"
        "from quiver.cli import main\n"
        f"sys.argv = ['quiver', 'lint', '--project', {str(root)!r}]\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT)
    line = next(x for x in done.stderr.splitlines() if x.startswith("MODULES "))
    return list(json.loads(line[len("MODULES ") :].replace("'", '"')))


# ---------------------------------------------------------------------------------------------------------
# ROUTE rules


def test_purpose_texts_and_paraphrases_read_the_first_sentence_and_clause() -> None:
    assert (
        purpose_text("read_text_file", "Read a file as text. Handles encodings.")
        == "read text file: Read a file as text."
    )
    assert first_clause("Notion | Update page properties\nError Responses: 400") == "Notion Update page properties"
    assert paraphrases("get_me", "Get details of the authenticated user. Use it first.") == [
        "Get details of the authenticated user"
    ]
    assert paraphrases("get_me", "") == ["get me"]
    assert semantic_similarity(0.5) == 0.0 and semantic_similarity(0.92) == pytest.approx(0.8)
    assert semantic_similarity(1.0) == pytest.approx(1.0)


def test_read_file_and_read_text_file_are_flagged_as_near_duplicates_after_snapshot_warmed_their_vectors(
    tmp_path: Path, corpus: Path
) -> None:
    cat = json.loads((corpus / "catalogs" / "filesystem.json").read_text(encoding="utf-8"))
    env = {k: v for k, v in os.environ.items() if k != "QUIVER_NO_CACHE"}
    root = tmp_path / "fs"
    (root / ".vscode").mkdir(parents=True)
    (root / ".vscode" / "mcp.json").write_text(json.dumps({"servers": {"filesystem": {"command": "npx"}}}))
    (root / "tools.json").write_text(json.dumps({"tools": cat["tools"]}))
    subprocess.run(
        [sys.executable, "-m", "quiver", "snapshot", "--project", str(root), "--server", "filesystem", "--import",
         str(root / "tools.json")], check=True, capture_output=True, env=env,
    )  # fmt: skip
    cache = VectorCache(root)
    assert cache.missing([purpose_text(t["name"], t["description"]) for t in cat["tools"]]) == []  # warmed
    messages = [f.message for f in _routing(root) if f.rule == "ROUTE001"]
    assert any("`filesystem/read_file` and `filesystem/read_text_file` read alike" in m for m in messages), messages
    (root / "quiver.toml").write_text('search = "lexical"\n', encoding="utf-8")
    lexical = [f.message for f in _routing(root) if f.rule == "ROUTE001"]
    assert not any("read_text_file" in m for m in lexical)  # words alone do not see it


def test_a_pr_helper_and_pr_reviewer_pair_among_three_agents_is_flagged(tmp_path: Path) -> None:
    agents = tmp_path / "repo" / ".github" / "agents"
    agents.mkdir(parents=True)
    for name, description in (
        ("pr-helper", "Reviews pull requests and triages issues in the repository"),
        ("pr-reviewer", "Reviews pull requests and triages the issues of the repository"),
        ("docs-writer", "Writes and updates the user guide and API reference from the source code"),
    ):
        (agents / f"{name}.agent.md").write_text(f"---\ndescription: {description}\n---\nDo the work.\n")
    found = [f for f in _routing(tmp_path / "repo") if f.rule == "ROUTE003"]
    assert [f.message.split(" have ")[0] for f in found] == ["agents `pr-helper` and `pr-reviewer`"]


def test_a_short_form_does_not_hide_a_near_duplicate_pair_among_three_agents(tmp_path: Path) -> None:
    """The issue's own pair: `repo` for `repository` is the one difference; IDF over three agents would
    make it dominate, the word overlap counts the short form as the word it starts."""
    agents = tmp_path / "repo" / ".github" / "agents"
    agents.mkdir(parents=True)
    for name, description in (
        ("pr-helper", "Reviews pull requests and triages issues in the repository"),
        ("pr-reviewer", "Reviews pull requests and triages issues in the repo"),
        ("release", "Writes release notes from merged changes and tags"),
    ):
        (agents / f"{name}.agent.md").write_text(f"---\ndescription: {description}\n---\nDo the work.\n")
    found = [f for f in _routing(tmp_path / "repo") if f.rule == "ROUTE003"]
    assert [f.message.split(" have ")[0] for f in found] == ["agents `pr-helper` and `pr-reviewer`"]
    assert "`repository`" in (found[0].hint or "") and "`repo`" in (found[0].hint or "")


def test_word_overlap_counts_short_forms_but_not_short_prefixes() -> None:
    from quiver.lint.route.near_duplicate_agent_descriptions import word_overlaps

    sets = [frozenset({"review", "repo"}), frozenset({"review", "repository"}), frozenset({"review", "doc"})]
    overlaps = word_overlaps([*sets, frozenset({"review", "docker"})])
    assert overlaps[(0, 1)] == 1.0  # repo stands for repository
    assert overlaps[(2, 3)] == 0.5  # `doc` is too short to stand for `docker`


def _routing(root: Path) -> list[object]:
    project = load_project(root)
    return list(run_checks(LintContext(project, tuple(resolve_project(project))), rules_of("ROUTE")))


def test_the_lexical_flag_reaches_search_and_route_test_from_the_command_line(demo: Path) -> None:
    from click.testing import CliRunner

    from quiver.cli import cli

    query = "see which version was shipped most recently"
    runner = CliRunner()
    semantic = runner.invoke(cli, ["search", "-C", str(demo), "--format", "json", query])
    lexical = runner.invoke(cli, ["search", "-C", str(demo), "--format", "json", "--lexical", query])
    assert semantic.exit_code == lexical.exit_code == 0
    assert json.loads(lexical.output) == json.loads(search(demo, query, None, 10, "json", lexical=True))
    assert json.loads(semantic.output) != json.loads(lexical.output)
    (demo / ".quiver").mkdir(exist_ok=True)
    cases = ROOT / "examples" / "demo" / ".quiver" / "routes.yaml"
    (demo / ".quiver" / "routes.yaml").write_bytes(cases.read_bytes())
    routes = runner.invoke(cli, ["route-test", "-C", str(demo), "--format", "json", "--lexical"])
    default = runner.invoke(cli, ["route-test", "-C", str(demo), "--format", "json"])
    assert json.loads(routes.output)["mrr"] != json.loads(default.output)["mrr"]


def test_a_docs_cosine_is_the_best_of_its_vectors_and_minus_one_without_any() -> None:
    import numpy as np

    from quiver._search._fuse import Semantic

    rng = np.random.RandomState(1)

    def unit(n: int) -> list[tuple[float, ...]]:
        v = rng.randn(n, 384).astype(np.float32)
        return [tuple(row) for row in (v / np.linalg.norm(v, axis=1, keepdims=True)).tolist()]

    vectors = [unit(1), unit(3), [], unit(2), unit(1)]
    query = np.asarray(unit(1)[0], dtype=np.float32)
    want = [max((float(np.dot(v, query)) for v in doc), default=-1.0) for doc in vectors]
    assert np.allclose(Semantic(vectors).cosines(query), want, atol=1e-6)
    single = [unit(1) for _ in range(4)]
    assert np.allclose(Semantic(single).cosines(query), [float(np.dot(d[0], query)) for d in single], atol=1e-6)


def test_the_one_query_session_encodes_as_the_full_model_does_and_steps_aside_once_it_is_loaded() -> None:
    """`quiver search` encodes its one query without constant folding (cheaper to load, slower per run): the
    vectors must be the full model's, and once the full model is loaded it is the one used."""
    from quiver._search import _embed

    queries = ["open a pull request", "what is 17.5% of 2340 plus 89", "is my local working copy clean?", "x"]
    unfolded = _embed.MiniLM(folded=False)
    full = _embed.MiniLM()
    for query in queries:
        a, b = unfolded.encode([query])[0], full.encode([query])[0]
        assert max(abs(x - y) for x, y in zip(a.tolist(), b.tolist(), strict=True)) < 1e-5, query
    _embed.model()  # the process-wide full model is loaded: a one-off query reuses it
    _embed._one_query_model.cache_clear()  # an earlier test in this worker may have loaded it
    vector = _embed.encode_query("open a pull request", once=True)
    assert _embed._one_query_model.cache_info().currsize == 0
    assert vector.tolist() == _embed.model().encode(["open a pull request"])[0].tolist()
