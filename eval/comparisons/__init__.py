"""Stage 3: paired comparisons, the family-wise leaderboard, pooled judgments and chunking comparisons."""
