"""The built-in taxonomy and glossary (defaults/): what they cover, and the rules their data is kept by."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from deckgen.curriculum.builtin import builtin_glossary, builtin_path, builtin_taxonomy
from deckgen.curriculum.origin import Origin
from deckgen.pipeline import list_topics
from deckgen.text.matching import fold, identifier_matches, keyword_pattern
from tests.conftest import FIXTURES, ROOT

ISSUE_TOPICS = ("attention", "kv-cache", "scheduling", "spec-decode", "quantization", "moe", "parallelism",
                "compilation", "kernels", "platforms", "multimodal", "api", "model-loading", "memory",
                "disaggregation", "structured-output", "lora", "build-ci", "testing", "observability")
"""The topics issue #31 asks for, by the ids the built-in taxonomy gives them."""


def test_builtin_taxonomy_has_the_fields_topics_and_a_catch_all_last() -> None:
    taxonomy = builtin_taxonomy()
    assert taxonomy.origin is Origin.BUILTIN and taxonomy.label == "the built-in taxonomy"
    assert set(ISSUE_TOPICS) <= set(taxonomy.ids)
    assert taxonomy.catch_all == "other" and taxonomy.ids[-1] == "other"
    assert all(t.zh and t.en for t in taxonomy.topics)
    assert builtin_path("topics.toml").parent.name == "defaults"


@pytest.mark.parametrize("topic", [t for t in builtin_taxonomy().topics if t.id != "other"], ids=lambda t: t.id)
def test_no_keyword_of_a_builtin_topic_contains_another(topic) -> None:  # type: ignore[no-untyped-def]
    """One mention counts once toward min_hits: "前缀缓存" beside "自动前缀缓存" would count it twice."""
    words = topic.keywords.words
    inside = [(a, b) for a, b in itertools.permutations(words, 2) if keyword_pattern(a).search(fold(b))]
    assert inside == []


UNRELATED_NAMES = ["output", "SchedulerOutput", "property", "execute_model", "upgrade_check", "extract_tool_calls",
                   "gemma3-cli", "relationship", "ownership", "smtp_client", "resample_audio"]


def test_builtin_identifier_patterns_do_not_match_inside_unrelated_names() -> None:
    """'*tpu*' would match output, '*gemm*' gemma, '*trac*' extract, '*hip*' ownership."""
    taxonomy = builtin_taxonomy()
    hits = {(t.id, name) for t in taxonomy.topics for name in UNRELATED_NAMES
            if t.id not in ("scheduling", "runtime", "multimodal") and identifier_matches(t.identifiers, [name])}
    assert hits == set()


def test_builtin_glossary_has_at_least_150_terms_each_with_a_short_answer_and_a_meaning() -> None:
    glossary = builtin_glossary()
    assert len(glossary.terms) >= 150
    for term in glossary.terms:
        assert term.meaning, term.term
        assert len(term.zh) <= 24 and not any(c in term.zh for c in "，；。"), term.term


def test_builtin_glossary_has_the_terms_the_issue_names() -> None:
    glossary = builtin_glossary()
    for name in ("KV", "MLA", "MoE", "EP", "TP", "PP", "DP", "FP8", "MXFP4", "GEMM", "NCCL", "RDMA", "LoRA", "AWQ",
                 "GPTQ", "GGUF", "CUDA Graph", "paged attention", "prefill", "decode"):
        assert glossary.knows(name), name


def test_no_spelling_belongs_to_two_builtin_terms() -> None:
    """A spelling of two terms would give a PR two cards for one word."""
    owner: dict[str, str] = {}
    clashes = []
    for term in builtin_glossary().terms:
        for spelling in {fold(s).replace(" ", "") for s in (term.term, *term.aliases)}:
            if owner.setdefault(spelling, term.term) != term.term:
                clashes.append((spelling, owner[spelling], term.term))
    assert clashes == []


@pytest.mark.parametrize("folder", [ROOT / "corpus" / "dev" / "seeds", FIXTURES / "dev"], ids=["corpus-dev", "fixtures-dev"])
def test_builtin_taxonomy_places_at_least_95_percent_of_the_prs_it_was_tuned_on(folder: Path) -> None:
    """Acceptance (issue #31) on the corpora the taxonomy was tuned on; benchmarks/topics.py measures the others."""
    report = list_topics([folder])
    assert report.taxonomy == "the built-in taxonomy"
    assert (report.entries - len(report.unmatched)) / report.entries >= 0.95
