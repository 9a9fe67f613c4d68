"""Any chunker on the cited-questions tasks: location of chunk texts, spans used as given, clear errors for
chunkers that rewrite or drop text, the external chunkers of the [chunkers] extra on a real IRPF act, gold by
span overlap and vigência by span, all against brute-force recomputations."""
from __future__ import annotations

import bisect
import json
import re
import warnings

import pytest

from ragcov_data.errors import RagcovError
from ragcov_data.loaders import chunkers
from ragcov_data.loaders.articles import locate
from ragcov_data.loaders.cited_questions import build_cited_task, irpf_dir

ACT = """LEI Nº 10, DE 5 DE MAIO DE 2000.
Dispõe sobre o imposto.

Art. 1º O imposto incide sobre os rendimentos   auferidos no País.
§ 1º Consideram-se rendimentos os valores recebidos em dinheiro.
§ 2º Estão isentos:
I - as diárias de viagem;
II - a indenização por despedida.

Art. 2º A declaração é anual.
Parágrafo único. O prazo pode ser prorrogado.

Art. 3º Esta Lei entra em vigor na data de sua publicação.
"""
QUESTIONS = [
    {"qid": "q1", "question": "A indenização é isenta?", "citations": "Lei nº 10, de 2000, art. 1º, § 2º, inciso II"},
    {"qid": "q2", "question": "Qual o prazo?", "citations": "Lei nº 10, de 2000, art. 2º"},
    {"qid": "q3", "question": "Quando vigora?", "citations": "Lei nº 10, de 2000, art. 3º"},
]


def _nows(s: str) -> str:
    return "".join(s.split())


@pytest.fixture()
def act_file(tmp_path):
    p = tmp_path / "acts.jsonl"
    p.write_text(json.dumps({"doc_id": "lei-10-2000", "title": "Lei nº 10, de 5 de maio de 2000", "text": ACT},
                            ensure_ascii=False) + "\n", encoding="utf-8")
    return p


def _brute_qrels(task, texts: dict[str, str]) -> dict[tuple[str, str], int]:
    """Qrels from the definition: a chunk overlapping a cited artigo is grade 1, one overlapping the cited
    dispositivo itself grade 2 (every chunk checked one by one)."""
    index = {d: locate(t) for d, t in texts.items()}
    chunks = task.corpus[["_id", "doc_id", "start_char", "end_char"]].to_dict("records")
    want: dict[tuple[str, str], int] = {}
    for c in task.citations.to_dict("records"):
        if c["status"] not in ("resolved", "dispositivo_not_found"):
            continue
        c = {k: (None if isinstance(v, float) and v != v else v) for k, v in c.items()}  # NaN: not cited
        idx = index[c["doc_id"]]
        art = idx.article(c["article"])
        prov = idx.find(c["article"], c["paragraph"], c["inciso"], c["alinea"], c["item"], c["caput"])[0]
        for ch in chunks:
            if ch["doc_id"] != c["doc_id"]:
                continue
            if ch["start_char"] < art.end and ch["end_char"] > art.start:
                want.setdefault((c["query-id"], ch["_id"]), 1)
            if c["status"] == "resolved" and ch["start_char"] < prov.end and ch["end_char"] > prov.start:
                want[(c["query-id"], ch["_id"])] = 2
    return want


def _qrels(task) -> dict[tuple[str, str], int]:
    return {(a, b): int(g) for a, b, g in task.qrels[["query-id", "corpus-id", "score"]].itertuples(index=False)}


def _check_task(task, texts: dict[str, str]) -> None:
    """Corpus text is the act's text over each span; qrels are the overlap rule."""
    c = task.corpus
    assert all(texts[d][a:b] == t for d, a, b, t in zip(c["doc_id"], c["start_char"], c["end_char"], c["text"]))
    assert _qrels(task) == _brute_qrels(task, texts)


# --------------------------------------------------------------------------- callables


def test_callable_returning_strings_is_located(act_file):
    paragraphs = lambda text: text.split("\n\n")  # noqa: E731
    task = build_cited_task(act_file, QUESTIONS, chunker=paragraphs)
    assert task.corpus["text"].tolist() == [p.strip() for p in ACT.split("\n\n") if p.strip()]
    assert task.manifest["config"]["chunker"] == "lambda" and task.manifest["config"]["chunking"] == "external"
    assert task.manifest["chunker"]["uncovered_characters"] == {}
    _check_task(task, {"lei-10-2000": ACT})
    # q1 cites inciso II of art. 1: the paragraph holding art. 1 is grade 2, no other chunk is relevant
    assert _qrels(task)[("q1", "lei-10-2000#0001")] == 2 and len([k for k in _qrels(task) if k[0] == "q1"]) == 1


def test_callable_returning_spans_is_used_as_given_overlaps_allowed(act_file):
    def windows(text: str) -> list[tuple[int, int]]:  # 120-character windows every 60: every chunk overlaps
        return [(a, min(a + 120, len(text))) for a in range(0, len(text) - 60, 60)]

    task = build_cited_task(act_file, QUESTIONS, chunker=windows)
    assert list(zip(task.corpus["start_char"], task.corpus["end_char"])) == windows(ACT)
    _check_task(task, {"lei-10-2000": ACT})
    grades = _qrels(task)
    assert sum(1 for q, _ in grades if q == "q2") >= 2  # the cited artigo spans several overlapping windows

    def nested(text: str) -> list[tuple[int, int]]:  # the whole act, then each artigo inside it (any order)
        arts = [m.start() for m in re.finditer(r"^Art\. ", text, flags=re.M)] + [len(text)]
        return [(0, len(text))] + list(zip(arts[:-1], arts[1:]))[::-1]

    task = build_cited_task(act_file, QUESTIONS, chunker=nested)
    assert list(zip(task.corpus["start_char"], task.corpus["end_char"])) == nested(ACT)
    _check_task(task, {"lei-10-2000": ACT})
    assert _qrels(task)[("q2", "lei-10-2000#0000")] == 2 and _qrels(task)[("q2", "lei-10-2000#0002")] == 2


def test_whitespace_collapsing_chunker_is_still_located(act_file):
    def collapse(text: str) -> list[str]:  # sentences with their whitespace collapsed and stripped
        return [" ".join(s.split()) for s in re.split(r"(?<=[.;:])\s+", text) if s.strip()]

    task = build_cited_task(act_file, QUESTIONS, chunker=collapse, config_name="sentences")
    assert [_nows(t) for t in task.corpus["text"]] == [_nows(s) for s in collapse(ACT)]
    assert "rendimentos   auferidos" in task.corpus["text"].str.cat()  # the act's own text over the span
    _check_task(task, {"lei-10-2000": ACT})


@pytest.mark.parametrize("chunker, match", [
    (lambda t: [t[:200], t[200:].replace("ç", "c")], "chunk 1 is not in act 'lei-10-2000': 'isentos: I - as diárias"),
    (lambda t: [p.replace("imposto", "tributo") for p in t.split("\n\n")], r"chunk 0 is not in act 'lei-10-2000'"),
    (lambda t: [p[:-3] + p[-2:] if len(p) > 40 else p for p in t.split("\n\n")], "cannot be located"),
    (lambda t: list(reversed(t.split("\n\n"))), "occurs earlier in the act"),
    (lambda t: [(0, 10), (5, len(t) + 1)], r"span 1 \(5, \d+\) is out of bounds"),
    (lambda t: [(0, 10), "Art. 1º"], "mixed with other kinds"),
    (lambda t: [], "returned no chunk for act 'lei-10-2000'"),
    (lambda t: [42], "chunks must all be strings"),
])
def test_rewriting_or_dropping_chunkers_fail_clearly(act_file, chunker, match):
    with pytest.raises(RagcovError, match=match):
        build_cited_task(act_file, QUESTIONS, chunker=chunker)


def test_rewrite_error_names_the_first_chunk_not_found(act_file):
    rewrite = lambda t: [p.upper() if "Art. 2" in p else p for p in t.split("\n\n")]  # noqa: E731
    with pytest.raises(RagcovError) as err:
        build_cited_task(act_file, QUESTIONS, chunker=rewrite, config_name="upper")
    msg = str(err.value)
    assert "chunk 2 is not in act 'lei-10-2000'" in msg and "'ART. 2º A DECLARAÇÃO É ANUAL." in msg


def test_unknown_names_and_missing_extra(monkeypatch):
    with pytest.raises(RagcovError, match="unknown chunker 'sentences'; accepted: words-N"):
        chunkers.resolve("sentences")
    with pytest.raises(RagcovError, match="cannot import 'nothing' from module 'json'"):
        chunkers.resolve("json:nothing")
    real = chunkers.importlib.import_module

    def no_chonkie(name, *a, **k):
        if name == "chonkie":
            raise ImportError("No module named 'chonkie'")
        return real(name, *a, **k)

    monkeypatch.setattr(chunkers.importlib, "import_module", no_chonkie)
    with pytest.raises(RagcovError, match=re.escape("pip install 'ragcov-data[chunkers]'")):
        chunkers.resolve("chonkie-sentence-100")
    assert chunkers.resolve("words-50").builtin == {"chunking": "words", "chunk_words": 50}


def test_builtin_names_take_the_builtin_path(act_file):
    a = build_cited_task(act_file, QUESTIONS, chunker="words-20")
    b = build_cited_task(act_file, QUESTIONS, chunking="words", chunk_words=20)
    assert a.corpus.equals(b.corpus) and a.qrels.equals(b.qrels) and a.manifest["config"]["name"] == "words-20"
    assert a.manifest["config"]["chunker"] is None


def test_locate_unit():
    text = "Art. 1º  Um\n texto.\n\nArt. 2º Outro texto. Art. 2º Outro texto."
    spans = chunkers.locate(text, ["Art. 1º Um texto.", "   ", "Art. 2º Outro texto.", "Art. 2º Outro texto."])
    assert spans == [(0, 19), (21, 41), (42, 62)]  # blank chunk skipped; the repeat is the next occurrence
    # a chunk overlapping the previous one is found after the previous chunk's start
    assert chunkers.locate("a b c d e f", ["a b c d", "c d e f"]) == [(0, 7), (4, 11)]


# --------------------------------------------------------------------------- external chunkers on a real act


@pytest.fixture(scope="module")
def irpf_act(data_dir, tmp_path_factory):
    """One real IRPF act (IN RFB 2.178/2024) as its own acts file, and the shared questions."""
    folder = irpf_dir(data_dir)
    rows = [json.loads(line) for line in open(folder / "laws.jsonl", encoding="utf-8")]
    act = next(r for r in rows if r["doc_id"] == "in-rfb-2178-2024")
    p = tmp_path_factory.mktemp("irpf") / "act.jsonl"
    p.write_text(json.dumps(act, ensure_ascii=False) + "\n", encoding="utf-8")
    return p, folder / "questions.jsonl", act["text"]


def _library_chunks(name: str, text: str) -> list[str]:
    """The chunk texts the library itself returns for ``name`` (no ragcov code involved)."""
    if name == "recursive-800":
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        return RecursiveCharacterTextSplitter(chunk_size=800, chunk_overlap=0).split_text(text)
    if name == "chonkie-sentence-100":
        from chonkie import SentenceChunker

        return [c.text for c in SentenceChunker(tokenizer="word", chunk_size=100, chunk_overlap=0).chunk(text)]
    import semchunk

    return semchunk.chunkerify(lambda s: len(s.split()), 100)(text)


@pytest.mark.parametrize("name", ["recursive-800", "chonkie-sentence-100", "semchunk-100"])
def test_external_chunkers_on_an_irpf_act(irpf_act, name):
    acts, questions, text = irpf_act
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # citations of the other acts are unresolved here
        task = build_cited_task(acts, questions, chunker=name)
    lib = [c for c in _library_chunks(name, text) if c.strip()]
    assert len(task.corpus) == len(lib) > 20
    assert [_nows(t) for t in task.corpus["text"]] == [_nows(c) for c in lib]  # each span holds its chunk
    _check_task(task, {"in-rfb-2178-2024": text})
    assert task.manifest["counts"]["citations_by_status"]["resolved"] > 10 and len(task.qrels) > 10
    assert task.manifest["chunker"]["library"].split("==")[0] in ("langchain-text-splitters", "chonkie", "semchunk")
    if name != "chonkie-sentence-100":  # chonkie keeps every character; the others drop only whitespace
        assert task.manifest["chunker"]["uncovered_characters"] == {}
    words = task.corpus["text"].str.split().str.len()
    if name != "recursive-800":
        assert words.max() <= 100 + 40  # N words (a sentence or a token may run over its chunk)


def test_chunker_objects_equal_their_names(irpf_act):
    from chonkie import SentenceChunker
    from langchain_text_splitters import RecursiveCharacterTextSplitter
    import semchunk

    _, _, text = irpf_act
    objects = {"recursive-800": RecursiveCharacterTextSplitter(chunk_size=800, chunk_overlap=0),
               "chonkie-sentence-100": SentenceChunker(tokenizer="word", chunk_size=100, chunk_overlap=0),
               "semchunk-100": semchunk.chunkerify(lambda s: len(s.split()), 100)}
    for name, obj in objects.items():
        spec = chunkers.resolve(obj)
        assert spec.name != name and spec.builtin is None
        assert chunkers.spans(spec, text, "in-rfb") == chunkers.spans(chunkers.resolve(name), text, "in-rfb")
    assert chunkers.resolve(objects["recursive-800"]).name == "RecursiveCharacterTextSplitter-800-0"
    assert chunkers.resolve(objects["recursive-800"], name="mine").name == "mine"


def test_load_dataset_with_a_chunker(irpf_act, tmp_path):
    from ragcov_data import load_dataset

    acts, questions, text = irpf_act
    files = {"acts": str(acts), "questions": str(questions)}
    kw = {"data_files": files, "cache_dir": tmp_path, "show_progress": False}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = load_dataset("cited_questions", chunker="recursive-800", **kw)
        paras = load_dataset("cited_questions", chunker=lambda t: t.split("\n\n"), chunker_name="paragraphs", **kw)
        lines = load_dataset("cited_questions", chunker=lambda t: t.split("\n"), chunker_name="lines", **kw)
        ref = build_cited_task(acts, questions, chunker="recursive-800")
    assert ds["corpus"].info.config_name == "recursive-800"
    assert ds["corpus"]["text"] == ref.corpus["text"].tolist()
    assert ds["corpus"]["start_char"] == ref.corpus["start_char"].tolist()
    assert sorted(zip(ds["qrels"]["query-id"], ds["qrels"]["corpus-id"], ds["qrels"]["score"])) == \
        sorted((a, b, int(g)) for a, b, g in ref.qrels.itertuples(index=False))
    assert paras["corpus"].info.config_name == "paragraphs" and lines["corpus"].info.config_name == "lines"
    assert len(lines["corpus"]) > len(paras["corpus"])  # distinct names: distinct tasks
    with pytest.raises(RagcovError, match="`chunker_name` names the chunker given as `chunker=`"):
        load_dataset("cited_questions", chunker_name="lines", **kw)


def test_vigencia_applies_to_every_chunker_by_span(data_dir):
    """Superseded wording kept (Planalto HTML read with keep_superseded): a chunk is out of force when at
    least half of the words starting inside its span are superseded — the same rule for built-in and
    external chunkers, and the built-in's by-span reading equals its word-counting one."""
    from ragcov_data.legal.acervo import read_acervo
    from ragcov_data.legal.vigencia import annotate_task

    folder = irpf_dir(data_dir)
    acervo = read_acervo(folder / "html", keep_superseded=True)
    by_doc = {d.doc_id: d for d in acervo.documents}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tasks = {n: build_cited_task(acervo, folder / "questions.jsonl", chunker=n) for n in ("words-100",
                                                                                           "recursive-800")}
    starts = {d: [m.start() for m in re.finditer(r"\S+", doc.text)] for d, doc in by_doc.items()}
    flags = {d: [any(x <= s < y for x, y in by_doc[d].superseded) for s in ss] for d, ss in starts.items()}
    for name, task in tasks.items():
        c = task.corpus
        assert (~c["in_force"]).sum() == task.manifest["vigencia"]["chunks_not_in_force"] > 0
        for d, a, b, got in zip(c["doc_id"], c["start_char"], c["end_char"], c["in_force"]):
            i, j = bisect.bisect_left(starts[d], a), bisect.bisect_left(starts[d], b)  # words starting inside
            sup = sum(flags[d][i:j])
            assert got == (not (j > i and 2 * sup >= j - i)), (name, d, a, b)
    words = tasks["words-100"].corpus.drop(columns="in_force")
    annotate_task(words, acervo, {"config": {}})  # the self-retrieval reading: words counted in order
    assert words["in_force"].tolist() == tasks["words-100"].corpus["in_force"].tolist()


def test_overlapping_library_chunks_are_located(irpf_act):
    """LangChain with chunk_overlap: each chunk starts inside the previous one and is still found there."""
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    acts, questions, text = irpf_act
    splitter = RecursiveCharacterTextSplitter(chunk_size=300, chunk_overlap=120)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        task = build_cited_task(acts, questions, chunker=splitter)
    lib = splitter.split_text(text)
    assert [_nows(t) for t in task.corpus["text"]] == [_nows(c) for c in lib]
    starts, ends = task.corpus["start_char"].tolist(), task.corpus["end_char"].tolist()
    assert sum(b < e for b, e in zip(starts[1:], ends[:-1])) > 20  # long paragraphs: chunks overlap
    assert starts == sorted(starts)
    _check_task(task, {"in-rfb-2178-2024": text})
    assert task.manifest["config"]["chunker"] == "RecursiveCharacterTextSplitter-300-120"


def test_module_attr_chunker_stdlib_textwrap(act_file):
    """``module:attr``: textwrap.wrap collapses whitespace and cuts lines at 70 characters."""
    import textwrap

    task = build_cited_task(act_file, QUESTIONS, chunker="textwrap:wrap")
    assert task.manifest["config"]["chunker"] == "textwrap-wrap"
    assert [_nows(t) for t in task.corpus["text"]] == [_nows(c) for c in textwrap.wrap(ACT)]
    _check_task(task, {"lei-10-2000": ACT})
