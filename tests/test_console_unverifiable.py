"""The console's star line tells a shortfall from a check that cannot vouch (verified_status)."""
from __future__ import annotations

from ragcov_data.reporting.console import _unverified_line, board_table


def _board(status: str, coverage: float) -> dict:
    row = {"name": "a", "group": "__all__", "estimate": 0.5, "low": 0.4, "high": 0.6, "rank": 1, "rank_low": 1,
           "rank_high": 1, "tier": "a", "verified": False, "verified_coverage": coverage, "verified_status": status}
    return {"systems": [row, {**row, "name": "b", "verified": True, "verified_status": "verified"}], "pairs": [],
            "level": 0.95, "metric": "hit@1"}


def test_a_shortfall_is_called_too_narrow_and_a_blind_check_is_not():
    board = _board("not_verified", 0.81)
    _, unverified = board_table(board)
    assert unverified == [("a", 0.81, "not_verified")]
    assert "a covers 81.0% at this design, short of 95%" in _unverified_line(board, unverified)
    board = _board("unverifiable", 0.97)
    _, unverified = board_table(board)
    line = _unverified_line(board, unverified)
    assert "cannot vouch for those intervals" in line and "short of" not in line
