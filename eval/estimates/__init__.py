"""Stage 2: micro and macro estimates with intervals clustered by the sampled unit, design diagnostics, and the
per-design coverage check (``verified``) of every interval."""
