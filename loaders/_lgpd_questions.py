"""Exam questions cited by LexML URN (the shared ``lgpd/questoes.jsonl`` layout), read as cited questions.

One JSON object a line, as published: ``ID_QUESTAO``, ``INFORMACOES_CONCURSO`` (board - body - post - year:
the exam), ``ENUNCIADO_COM_ALTERNATIVAS`` (the question as a candidate reads it), ``URN_FUNDAMENTACAO`` (the
provisions the commented answer rests on, as LexML URNs or source keys) and fields that are not read: the
commented answer (``RESPOSTA_COMENTADA``, ``QUESTAO_COM_RESPOSTA_COMENTADA_E_FORMATADA``) quotes the law and is
never a query. :func:`read_lgpd_questions` turns each into the record of
:func:`ragcov_data.loaders.questions.validate_questions` (:data:`QUESTION_RULE`).
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Mapping

from ragcov_data.errors import InputFileError
from ragcov_data.legal import citations as cit
from ragcov_data.legal.acervo import _decode, jsonl_lines
from ragcov_data.loaders.questions import validate_questions

__all__ = ["read_lgpd_questions", "QUESTION_FIELDS", "QUESTION_RULE", "NOT_READ"]

#: Fields every question needs: its id, its exam, the question as a candidate reads it, its URNs.
QUESTION_FIELDS = ("ID_QUESTAO", "INFORMACOES_CONCURSO", "ENUNCIADO_COM_ALTERNATIVAS", "URN_FUNDAMENTACAO")
#: Fields that hold the commented answer (it quotes the law): never read.
NOT_READ = ("RESPOSTA_COMENTADA", "QUESTAO_COM_RESPOSTA_COMENTADA_E_FORMATADA", "RESPOSTA", "FUNDAMENTACAO_FORMATADA")
QUESTION_RULE = (
    "query = ENUNCIADO_COM_ALTERNATIVAS (the statement and its alternatives, as a candidate reads it; the commented "
    "answer, which quotes the law, is never read); gold = URN_FUNDAMENTACAO, each LexML URN parsed into its act and "
    "dispositivo (a source key, e.g. enunciado_cd_anpd_1_2023, is a source cited whole); coverage 'partial' when an "
    "entry names an act or source not in the corpus (listed in uncovered_references), else 'full'; cluster = the "
    "exam (INFORMACOES_CONCURSO), queries columns exam and topic"
)


def read_lgpd_questions(path: str | os.PathLike, table: Mapping[tuple, str]) -> list[dict]:
    """Read a questions file of the ``lgpd`` layout into cited-questions records.

    Parameters
    ----------
    path : path
        JSON Lines, one question a line (see the module docstring).
    table : dict
        The corpus's alias table (act key -> ``doc_id``): an entry whose act is not in it makes the question
        ``partial`` and is listed in its ``uncovered_references``.

    Returns
    -------
    list of dict
        ``qid`` (``ID_QUESTAO``), ``question``, ``references`` (``{"raw": urn}`` each), ``coverage``,
        ``uncovered_references``, ``exam``, ``topic`` (the exam), ``question_summary`` (None).

    Raises
    ------
    InputFileError
        A missing or non-UTF-8 file, a line that is not JSON, a missing or empty field, ``URN_FUNDAMENTACAO``
        that is not a non-empty list of strings, an entry that is neither a LexML URN nor a source key, a broken
        URN, a repeated id; the message names the file, the line, the question and the fix.
    """
    p = Path(path)
    if not p.is_file():
        raise InputFileError(f"questions file {str(p)!r} does not exist; pass a JSON Lines file of the lgpd layout "
                             f"({', '.join(QUESTION_FIELDS)}).")
    records: list[tuple[str, Any]] = []
    for n, line in jsonl_lines(_decode(p.read_bytes(), str(p))):
        if not line.strip():
            continue
        where = f"{p}: line {n}"
        try:
            rec = json.loads(line)
        except ValueError as exc:
            raise InputFileError(f"{where} is not valid JSON ({exc}); write one JSON object a line.") from None
        records.append((where, _record(where, rec, table)))
    if not records:
        raise InputFileError(f"{p}: no questions; the file is empty.")
    return validate_questions(records)


def _record(where: str, rec: Any, table: Mapping[tuple, str]) -> dict:
    """One question as a cited-questions record (checked)."""
    if not isinstance(rec, Mapping):
        raise InputFileError(f"{where} is not a JSON object; write one question object a line.")
    qid = rec.get("ID_QUESTAO")
    if qid is None or isinstance(qid, bool) or not isinstance(qid, (str, int)) or not str(qid).strip():
        raise InputFileError(f"{where} has no ID_QUESTAO; give each question its id (a string or a number).")
    qid = str(qid).strip()
    for field in QUESTION_FIELDS[1:3]:
        value = rec.get(field)
        if not isinstance(value, str) or not value.strip():
            got = "missing" if field not in rec else f"{type(value).__name__} {value!r}"[:60]
            raise InputFileError(f"{where} (question {qid!r}): {field} is {got}; give it as a non-empty string.")
    urns = rec.get("URN_FUNDAMENTACAO")
    if not isinstance(urns, list) or not urns or not all(isinstance(u, str) and u.strip() for u in urns):
        got = "missing" if "URN_FUNDAMENTACAO" not in rec else f"{type(urns).__name__} {urns!r}"[:80]
        raise InputFileError(f"{where} (question {qid!r}): URN_FUNDAMENTACAO is {got}; give a non-empty list of "
                             "strings, each a LexML URN (urn:lex:br:federal:lei:2018-08-14;13709!art5_cpt_inc6) "
                             "or a source key (enunciado_cd_anpd_1_2023).")
    uncovered = [u for u in urns if _uncovered(where, qid, u, table)]
    exam = " ".join(rec["INFORMACOES_CONCURSO"].split())
    return {"qid": qid, "question": rec["ENUNCIADO_COM_ALTERNATIVAS"].strip(),
            "references": [{"raw": u.strip()} for u in urns],
            "coverage": "partial" if uncovered else "full", "uncovered_references": uncovered,
            "exam": exam, "topic": exam, "question_summary": None}


def _uncovered(where: str, qid: str, entry: str, table: Mapping[tuple, str]) -> bool:
    """Does ``entry`` name an act or source that is not in the corpus? A broken URN, or an entry that is
    neither a URN nor a source key, is an error naming the question."""
    if not (cit.is_urn(entry) or cit.is_source_key(entry)):
        raise InputFileError(f"{where} (question {qid!r}): {entry!r} in URN_FUNDAMENTACAO is neither a LexML URN "
                             "(urn:lex:...) nor a source key (a lower-case identifier with underscores); fix or drop "
                             "it.")
    try:
        c = cit.parse_urn(entry, table=dict(table))
    except cit.UrnError as exc:
        raise InputFileError(f"{where} (question {qid!r}): {exc} Fix the URN in URN_FUNDAMENTACAO.") from None
    return c.doc_id is None and c.reason is None
