"""The console's marks tell a shortfall from a check that cannot vouch (verified_status), row by row."""
from __future__ import annotations

from ragcov_data.reporting.console import board_table

REASON = "the sizes of the documents the sample did not draw are unknown"


def _board(status: str, coverage: float, reason: str = "") -> dict:
    row = {"name": "a", "group": "__all__", "estimate": 0.5, "low": 0.4, "high": 0.6, "rank": 1, "rank_low": 1,
           "rank_high": 1, "tier": "a", "verified": False, "verified_coverage": coverage, "verified_mc_se": 0.01,
           "verified_status": status, "verified_reason": reason}
    return {"systems": [row, {**row, "name": "b", "verified": True, "verified_status": "verified"}], "pairs": [],
            "level": 0.95, "metric": "hit@1"}


def test_a_shortfall_is_called_short_and_a_blind_check_gives_its_reason():
    table, notes = board_table(_board("not_verified", 0.81))
    row_a = next(x for x in table if x.strip().startswith("a "))
    row_b = next(x for x in table if x.strip().startswith("b "))
    assert "[0.4000, 0.6000] *" in row_a and "*" not in row_b and "‡" not in row_b
    assert notes == ["* NOT VERIFIED: a covers 81.0% ± 2.0%: short of the 95% level at this design."]
    table, notes = board_table(_board("unverifiable", 0.97, REASON))
    row_a = next(x for x in table if x.strip().startswith("a "))
    assert "[0.4000, 0.6000] ‡" in row_a and "*" not in row_a
    assert notes == [f"‡ UNVERIFIABLE: a: the check cannot vouch here: {REASON}."]
    assert not any("short of" in n or "covers" in n for n in notes)  # never described as covering less
