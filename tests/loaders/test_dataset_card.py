"""The dataset card: its size category follows the real counts, and it tells outside scorers what to do."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

from ragcov_data import publish
from ragcov_data.tasks.publish import packaged_card

REPO = Path(__file__).resolve().parents[2]

#: Hugging Face's size categories: upper bounds and names.
HF_SIZES = [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"),
            (10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M")]


def _category(n: int) -> str:
    return next(name for bound, name in HF_SIZES if n < bound)


def _front(text: str) -> dict:
    return yaml.safe_load(re.match(r"\A---\n(.*?)\n---\n", text, re.S).group(1))


def test_copies_identical_and_packaged():
    repo = (REPO / "dataset_card.md").read_text(encoding="utf-8")
    assert (REPO / "ragcov_data" / "dataset_card.md").read_text(encoding="utf-8") == repo
    assert packaged_card() == repo


def test_size_categories_from_real_counts(aneel_task):
    """Default config chunks-100: the corpus/queries and the qrels give the two categories."""
    card = _front(packaged_card())
    want = {_category(len(aneel_task.corpus)), _category(len(aneel_task.queries)), _category(len(aneel_task.qrels))}
    assert set(card["size_categories"]) == want == {"1K<n<10K", "100K<n<1M"}
    body = packaged_card()
    assert f"{len(aneel_task.corpus):,} corpus rows" in body and f"{len(aneel_task.qrels):,} qrels" in body


def test_outside_scorer_rules_reach_the_published_card(aneel_task, tmp_path):
    out = publish(aneel_task, tmp_path / "pub")
    readme = (out / "README.md").read_text(encoding="utf-8")
    for text in ("ignore_identical_ids=True", "ragcov_data.exclude_self(run, ds)",
                 "ir_measures, pytrec_eval, trec_eval",
                 "a query's `_id` equals its own chunk's `_id`", "`k + 1`"):
        assert text in readme, text
    assert set(_front(readme)["size_categories"]) == {"1K<n<10K", "100K<n<1M"}
