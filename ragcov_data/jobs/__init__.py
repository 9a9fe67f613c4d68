"""Jobs: the command line's work as library calls, so a verb and its Python call give the same results.

``benchmark`` is the main job (``ragcov benchmark``: every baseline on the default data, evaluated, ranked
family-wise, the chunking and coverage studies, rendered by :mod:`ragcov_data.reporting`); ``studies`` holds the
other verbs' jobs (making a run file's run, comparing chunkings of an acervo or of cited questions, reading a pilot
or a population for the planner and the coverage study). The verbs themselves (argument parsing and printing) are
:mod:`ragcov_data.cli`.
"""
