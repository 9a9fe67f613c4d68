"""The report's glossary: every term of its first screen and tables, each interval method and each retriever,
in plain words (one source for the HTML page and ``summary.md``)."""
from __future__ import annotations

import html
from typing import Mapping

__all__ = ["GLOSSARY", "glossary", "glossary_html", "glossary_md"]

#: Plain-words definitions of every term the report uses.
GLOSSARY = {
    "hit@1": "1 when the first retrieved chunk is relevant (a chunk of the query's own document), else 0.",
    "nDCG@10": "normalised discounted cumulative gain of the top 10: graded relevance, discounted by position, "
               "divided by the best possible; 1 is a perfect ranking.",
    "recall@10": "on the IRPF questions, the share of a question's cited provisions found in the top 10 retrieved "
                 "chunks (a provision is found when a retrieved chunk contains it).",
    "text share (span_recall@Bw)": "on cited questions, the share of the cited provisions' text (non-space "
                                   "characters) inside the context of B words: the measure that names the winning "
                                   "cut.",
    "touched (recall@Bw)": "on cited questions, the share of the cited provisions some character of which is inside "
                           "the context; a provision touched counts whole, so more, shorter chunks touch more "
                           "provisions whatever they carry.",
    "text share curve": "the share of cited provisions with any, at least 50%, at least 90% and all of their text "
                        "inside the context.",
    "micro": "the mean over all queries (trec_eval's number); documents with many chunks weigh more.",
    "macro": "the mean of per-document means; every document weighs the same.",
    "cluster": "the unit that was sampled (a document, or JurisTCU's source summary); queries of one cluster "
               "are not independent, so intervals are computed over clusters.",
    "CR2": "a cluster-robust standard error with a small-sample correction (Bell–McCaffrey), used with a t "
           "distribution on Satterthwaite degrees of freedom.",
    "naive": "an interval that treats every chunk as independent; shown only as a contrast, it is too narrow.",
    "icc": "intra-class correlation: how much of the outcome's variation lies between documents rather than "
           "within them (from 0, nothing, to 1, everything).",
    "deff": "design effect: how many times larger the variance of the mean is than if queries were "
            "independent.",
    "n_eff": "effective sample size: the number of independent queries the clustered sample is worth "
             "(queries / deff).",
    "lag1 autocorrelation": "correlation between the outcomes of neighbouring chunks of one document.",
    "share never hit": "the share of documents not one of whose chunks was found at rank 1.",
    "family-wise": "all pairs of a table are tested together, so the chance of any false separation stays at "
                   "the stated level.",
    "Holm": "a step-down adjustment of p-values for a family of tests; the leaderboard's p_adj is instead the adjusted p-value of the simultaneous interval's own test.",
    "simultaneous interval": "intervals for every pair of a family that hold together at the stated level.",
    "separable": "the pair's simultaneous interval excludes 0: the data tell the two apart, family-wise.",
    "tier": "letters from the separations: systems sharing a letter are not separable.",
    "rank interval": "the ranks a system could hold given which pairs are separable.",
    "judged@10": "the share of a system's top 10 documents that carry a judgment; below 0.9 its score may owe "
                 "much to the judgment pool.",
    "condensed": "the score with unjudged documents removed from each list (judged-only evaluation).",
    "unjudged_as_relevant": "the score with unjudged documents read as relevant at the lowest positive grade "
                            "(bound_high in the JSON); a reading beside the estimate (unjudged read as "
                            "non-relevant), not a bound.",
    "robust": "a separation that holds, in the same order, whether unjudged documents are read as "
              "non-relevant, removed or relevant.",
    "coverage": "how often an interval method's 95% interval contained the census value over repeated samples "
                "of K documents.",
    "MC margin": "the Monte-Carlo uncertainty of a simulated coverage (95%).",
    "verified": "an interval whose method was checked on a known population of this design (the task's own "
                "units and sizes) and covered its nominal level there; no mark beside it. The check sees the "
                "units the data hold: a kind of unit they lack (larger than any here) is outside it.",
    "not verified (*)": "the check measured the method's coverage at this design and found it short of the "
                        "nominal level; the coverage is printed beside the mark.",
    "unverifiable (‡)": "the check cannot vouch for the interval at this design (for example, one document "
                        "holds too large a share of the queries); the reason is printed beside the mark.",
    "per-document mean": "macro: the mean of each document's own mean, every document weighing the same.",
    "budgeted measures (@Bw)": "measures of the context a reader gets within B words of retrieved text, the "
                               "last item cut at exactly B words: span_recall@Bw (text share), recall@Bw "
                               "(touched), covered_any/50/90/whole@Bw (the text share curve).",
    "dispositivo": "a provision of a Brazilian act below the article: caput, paragraph (§), inciso, alínea; "
                   "the dispositivo cut makes one chunk of each.",
    "article": "the cut that makes one chunk of each article of an act (artigo), its provisions included.",
    "words-N": "the cut into chunks of N words, whatever the act's structure.",
    "cut": "a way of chunking the acts (words-N, article, dispositivo); a system is a cut with a retriever "
           "(words-50/bm25-pt).",
    "trec_eval": "the reference IR evaluation tool; ragcov's scores of a run equal its numbers (ties broken by "
                 "document id, descending).",
    "pooled judgments": "relevance judged only for documents some engine retrieved; the rest are unjudged.",
}


def glossary(retrievers: Mapping[str, str] | None = None) -> dict[str, str]:
    """:data:`GLOSSARY`, then every interval method (``cr2``, ``cluster_bootstrap`` …) and every retriever of
    ``retrievers`` (name → description, as the main job records them in ``meta.retriever_descriptions``) by its
    own description, so a name printed anywhere in a report is defined."""
    from ragcov_data.eval.estimates._kernels import METHODS

    out = dict(GLOSSARY)
    for name, spec in METHODS.items():
        out.setdefault(f"{name} (interval method)", spec["doc"] + ("; shown only as a contrast" if spec["naive"]
                                                                   else "") + ".")
    for name, description in (retrievers or {}).items():
        out.setdefault(f"{name} (retriever)", description.rstrip(".") + ".")
    return out


def glossary_html(terms: Mapping[str, str] | None = None) -> str:
    """The glossary section, open, in columns where the page is wide (one click from the first screen's link
    lands on the definitions); each term with its dd in one ``div`` so a column never splits them."""
    terms = glossary() if terms is None else terms
    e = html.escape
    return ('<section id="glossary"><h2>Glossary</h2><dl class="glossary">'
            + "".join(f'<div><dt id="{e(_anchor(k))}">{e(k)}</dt><dd>{e(v)}</dd></div>' for k, v in terms.items())
            + "</dl></section>")


def glossary_md(terms: Mapping[str, str] | None = None) -> list[str]:
    """The glossary as markdown lines (``summary.md``)."""
    terms = glossary() if terms is None else terms
    return ["## Glossary", ""] + [f"- **{k}**: {v}" for k, v in terms.items()] + [""]


def _anchor(term: str) -> str:
    """``g-`` and the term's letters and digits, the rest as ``-`` (``CR2`` -> ``g-cr2``, ``cr2 (interval method)``
    -> ``g-cr2--interval-method``): one id per term."""
    return "g-" + "".join(c if c.isalnum() else "-" for c in term.lower()).strip("-")
