"""Stage 5: coverage studies on a known population, the population twin, the sample-size planner and power."""
