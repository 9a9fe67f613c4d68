"""Interop: ragcov's tasks, runs and retrievers inside other harnesses, with the same numbers.

``irds`` registers every benchmark with ``ir_datasets``; ``mteb`` gives ragcov's tasks as MTEB retrieval tasks
and its retrievers as MTEB search models; ``outside`` hands runs to outside scorers (BEIR, ir_measures,
pytrec_eval, trec_eval) without changing the score (a self-retrieval query's own chunk removed).
"""
