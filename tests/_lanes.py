"""The fast lane: what ``pytest -m "not slow"`` leaves out, and the rule that marks it (read by ``conftest.py``).

Measured with ``python benchmarks/suite_durations.py``: a module's time is its tests' setup, call and teardown.
Kept apart from ``conftest.py`` so that tests and the benchmark script import it without the conftest's side
effects.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

import pytest

REPO = Path(__file__).resolve().parents[1]

#: Modules left out of the fast lane (`pytest -m "not slow"`): end-to-end runs of the main job, the CLI and the
#: docs' pages, Ray clusters, real dense models, the browser, simulations. Measured with
#: `python benchmarks/suite_durations.py` (a module's time is its tests' setup, call and teardown, on two workers);
#: the full suite, CI's and the README's, runs them all.
SLOW_MODULES = (
    "tests/test_docs_snippets.py",              # every page's code, the main job's included
    "tests/test_engine_ray.py",                 # local Ray clusters
    "tests/baselines/test_dense.py",            # real packaged encoders
    "tests/cli/test_cli_coverage.py",           # the main job end to end
    "tests/eval/test_leaderboard.py",           # null families by simulation
    "tests/eval/test_text_share.py",            # pipelines and references on IRPF and LGPD
    "tests/test_pipelines.py",                  # pipelines end to end
    "tests/eval/test_passage_run_cases.py",     # passage runs through every verb
    "tests/eval/test_passage_runs.py",
    "tests/cli/test_cli_juristcu.py",           # build, run, eval end to end
    "tests/test_report_browser.py",             # Chromium
    "tests/eval/test_budget.py",                # every budgeted measure against a scratch count
    "tests/test_mteb.py",                       # MTEB runs
    "tests/loaders/test_sample_docs.py",        # allocation by simulation
    "tests/cli/test_cli_chunking_irpf.py",      # ragcov chunking on IRPF
    "tests/cli/test_cli_task_sources.py",       # every task source through the CLI
    "tests/cli/test_cli_messages_point_the_way.py",
    "tests/eval/test_juristcu_section.py",
    "tests/cli/test_cli_fingerprint_cuts.py",
    "tests/cli/test_cli_sample_docs.py",
    "tests/eval/test_known_sizes.py",           # coverage of sized samples by simulation
    "tests/test_report_cited.py",               # the chunking study on IRPF and LGPD, rendered
    "tests/test_report_irpf.py",
    "tests/test_proxy_job.py",                  # the proxy study on real tasks
    "tests/test_marks_everywhere.py",           # every output of real runs
)

#: Single tests left out of the fast lane: each took 4 s or more (all its parameters together) on a busy machine,
#: or, in the second block, 1.7 s or more on a quiet one (2026-12-07).
SLOW_TESTS = (
    "tests/eval/test_prepared_qrels.py::test_prepared_qrels_match_raw_qrels",
    "tests/eval/test_metrics.py::test_every_metric_under_every_order_of_ties",
    "tests/eval/test_misses.py::test_misses_are_the_queries_evaluate_scores_zero",
    "tests/test_runs_bad_input.py::test_depth_keeps_the_top_rows_and_their_ties",
    "tests/test_report_browser_skip.py::test_without_a_browser_the_skip_line_says_how_many_checks_are_not_run",
    "tests/eval/test_outcomes.py::test_sampled_run_gets_one_interval_from_eval_leaderboard_and_compare",
    "tests/cli/test_cli_proxy.py::test_proxy_on_irpf",
    "tests/cli/test_cli_same_notices.py::test_cli_and_api_print_the_same_notices_for_every_run",
    "tests/test_packaging.py::test_wheel_imports_subpackages_outside_the_repo",
    "tests/test_pipelines_writers.py::test_a_second_run_on_one_out_is_refused_naming_the_first",
    "tests/eval/test_self_budget.py::test_span_recall_equals_a_brute_force_reading",
    "tests/cli/test_cli_chunking_chunkers.py::test_chunking_irpf_with_chunkers_end_to_end",
    "tests/cli/test_cli_chunking.py::test_chunking_verb_equals_the_api",
    "tests/eval/test_family_level.py::test_macro_family_holds_its_level_on_null_families",
    "tests/eval/test_judged.py::test_judged_equals_ir_measures_on_short_runs",
    "tests/loaders/test_lgpd.py::test_load_dataset_every_config",
    "tests/cli/test_cli_units.py::test_eval_and_chunking_give_one_irpf_run_one_interval",
    "tests/eval/test_proxy.py::test_permutation_critical_tau_against_enumeration",
    "tests/baselines/test_analyzer.py::test_count_terms_splits_words_exactly_as_str_split",
    "tests/cli/test_cli_lgpd.py::test_chunking_on_lgpd_and_on_a_held_out_file",
    "tests/loaders/test_outside_scorers.py::test_pytrec_eval_penalises_own_chunk_and_agrees_after_exclude_self",
    "tests/eval/test_wild.py::test_null_pairs_with_a_dominant_document_hold_their_size",
    "tests/loaders/test_chunkers.py::test_vigencia_applies_to_every_chunker_by_span",
    "tests/eval/test_verify_outputs.py::test_leaderboard_function_json_has_every_check",
    "tests/test_doctests.py::test_docstring_examples",
    "tests/eval/test_outcome_stage.py::test_a_run_made_on_a_document_sample_is_prepared_with",
    "tests/test_pipelines_contract.py::"
    "test_a_run_with_no_passage_reads_back_as_a_passage_run_and_every_verb_refuses_it",
    "tests/cli/test_cli_output_marks.py::test_every_verb_rewrites_its_own_outputs_without_force",
    "tests/cli/test_cli_eval_cited.py::test_eval_recall_is_provision_recall",
    "tests/cli/test_cli_leaderboard.py::test_writes_json_html_markdown_and_prints_table",
    "tests/eval/test_wild.py::test_statsmodels_entry_point_agrees",
    "tests/cli/test_cli_leaderboard_sampled.py::test_sampled_leaderboard_header_names_the_printed_interval",
    "tests/loaders/test_publish_irds.py::test_plain_datasets_load_offline",
    "tests/cli/test_cli_chunking_option.py::test_publish_both_chunkings",
    "tests/cli/test_cli_eval.py::test_cli_reads_only_the_rows_the_metric_sees_and_scores_the_same",
    "tests/test_studies.py::test_chunking_comparison_reuses_a_given_run_and_evaluation",
    "tests/cli/test_cli_units.py::test_another_unit_is_said",
    "tests/loaders/test_lgpd.py::test_dispositivo_chunks_follow_the_units",
    "tests/cli/test_cli_plan_difference.py::test_plan_difference_from_two_runs_matches_the_json_pilot",
    "tests/cli/test_cli_output_guard.py::test_eval_json_over_another_run_is_refused_and_own_outputs_are_rewritten",
    "tests/eval/test_outcomes.py::test_all_tied_runs_are_noticed_wherever_scored",
    "tests/cli/test_cli_eval_cited.py::test_eval_cited_bad_input",
    "tests/eval/test_bring_your_runs.py::test_queries_without_judgments_are_left_out_with_a_notice",
    "tests/cli/test_cli_eval_cited.py::test_chunk_recall_is_trec_eval",
    "tests/eval/test_chunkings.py::test_few_documents_flag_the_bootstrap_as_the_core_does",
    "tests/cli/test_cli_fingerprint.py::test_run_of_another_cut_is_refused_naming_its_task",
    "tests/cli/test_cli_fingerprint.py::test_irpf_run_of_another_cut_is_refused",
    "tests/eval/test_bring_your_runs.py::test_juristcu_subset_documents_are_a_notice_not_an_error",
    "tests/loaders/test_vigencia_units.py::test_the_real_rir_page_art_644",
    "tests/test_report_juristcu.py::test_juristcu_report_words_follow_the_unit",
    "tests/loaders/test_chunker_keys.py::test_acts_saved_in_nfd_are_the_same_acts",
    "tests/cli/test_cli_eval_cited.py::test_leaderboard_on_a_cited_task_scores_the_cited_provisions",
    "tests/cli/test_cli_eval_cited.py::test_hit_is_provision_hit_and_chunk_hit_is_the_qrels",
    "tests/eval/test_wild_leaderboard.py::test_verdict_is_the_interval_and_best_set_follows",
    "tests/eval/test_misses.py::test_aneel_new_flags_measured",
    "tests/eval/test_concentration.py::test_the_other_tasks_are_checked",
    "tests/eval/test_concentration.py::test_a_concentrated_exam_census_says_exams_not_documents",
    "tests/eval/test_verify_outputs.py::test_family_check_fails_where_the_family_over_rejects",
    "tests/eval/test_wild.py::test_full_enumeration_matches_wildboottest",
    "tests/loaders/test_cited_questions.py::test_irpf_every_chunking_resolves",
    "tests/loaders/test_dispositivos.py::test_aneel_sample_invariants",
    "tests/eval/test_cited.py::test_cited_chunking_study_pairs_by_question",
    "tests/eval/test_macro_hull.py::test_simultaneous_coverage_on_skewed_documents",
    "tests/eval/test_chunkings.py::test_bad_inputs",
    "tests/eval/test_chunkings.py::test_equal_sizes_make_the_micro_linearisation_the_paired_t",
    "tests/eval/test_bring_your_runs.py::test_bom_and_gzip_task_tables_through_the_cli",
    "tests/eval/test_verify_outputs.py::test_leaderboard_records_and_family_check",
    "tests/loaders/test_vigencia.py::test_the_shared_pages",
)


def mark_slow(items: Iterable[pytest.Item]) -> None:
    """Mark every test of :data:`SLOW_MODULES` and :data:`SLOW_TESTS` ``slow``."""
    slow = {REPO / m for m in SLOW_MODULES}
    tests = {(REPO / t.split("::")[0], t.split("::")[1]) for t in SLOW_TESTS}
    for item in items:
        path = Path(str(item.fspath))
        if path in slow or (path, getattr(item, "originalname", item.name)) in tests:
            item.add_marker(pytest.mark.slow)
