"""Chunkers that cannot lie: a callable chunker's cache key is what it does (the spans it returns on the acts),
not its name; a return that is not a list of chunks is refused naming its type; a config name and an option
that contradict it are refused; the cited-questions task explains its own limits (query_words), reads acts
saved in NFD as the same acts, and says the type of a reference level given as a list."""
from __future__ import annotations

import json
import unicodedata
import warnings

import pytest

from ragcov_data import load_dataset
from ragcov_data.errors import InputFileError, RagcovError
from ragcov_data.loaders import chunkers
from ragcov_data.loaders.cited_questions import build_cited_task, irpf_dir

from tests.loaders.test_chunkers import ACT, QUESTIONS


@pytest.fixture()
def files(tmp_path):
    acts = tmp_path / "acts.jsonl"
    acts.write_text(json.dumps({"doc_id": "lei-10-2000", "title": "Lei nº 10, de 5 de maio de 2000", "text": ACT},
                               ensure_ascii=False) + "\n", encoding="utf-8")
    questions = tmp_path / "questions.jsonl"
    questions.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in QUESTIONS), encoding="utf-8")
    return {"acts": str(acts), "questions": str(questions)}


def _load(files, cache, chunker, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_dataset("cited_questions", data_files=files, cache_dir=cache, chunker=chunker, **kw)


def _spans(ds) -> list[tuple[int, int]]:
    return list(zip(ds["corpus"]["start_char"], ds["corpus"]["end_char"]))


def _ref(files, chunker) -> list[tuple[int, int]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        task = build_cited_task(files["acts"], files["questions"], chunker=chunker)
    return list(zip(task.corpus["start_char"].tolist(), task.corpus["end_char"].tolist()))


def test_two_lambdas_never_share_a_cache_entry(files, tmp_path):
    paragraphs = lambda t: t.split("\n\n")  # noqa: E731
    lines = lambda t: t.split("\n")  # noqa: E731
    first_chars = lambda t: [(0, 40), (40, len(t))]  # noqa: E731
    got = {f: _spans(_load(files, tmp_path, f)) for f in (paragraphs, lines, first_chars)}
    for f, spans in got.items():
        assert spans == _ref(files, f)  # each lambda gets its own chunks, not the first one's
    assert len({tuple(s) for s in got.values()}) == 3
    again = _load(files, tmp_path, lambda t: t.split("\n\n"))  # another lambda doing the same: the same task
    assert _spans(again) == got[paragraphs]


def test_a_changed_chunker_under_its_old_name_is_rebuilt(files, tmp_path):
    def cut(text):
        return text.split("\n\n")

    before = _load(files, tmp_path, cut, chunker_name="mine")

    def cut(text):  # noqa: F811 - the same name, changed
        return [text[i:i + 60] for i in range(0, len(text), 60)]

    after = _load(files, tmp_path, cut, chunker_name="mine")
    assert before["corpus"].info.config_name == after["corpus"].info.config_name == "mine"
    assert _spans(after) == _ref(files, cut) != _spans(before)


def test_the_key_is_the_behaviour():
    docs = [type("D", (), {"doc_id": "a", "text": ACT})()]
    one = chunkers.with_behaviour(chunkers.resolve(lambda t: t.split("\n\n")), docs)
    same = chunkers.with_behaviour(chunkers.resolve(lambda t: [p for p in t.split("\n\n")]), docs)
    other = chunkers.with_behaviour(chunkers.resolve(lambda t: t.split("\n")), docs)
    assert one.name == same.name == other.name == "lambda"
    assert one.key == same.key != other.key


@pytest.mark.parametrize("chunker, kind", [
    (lambda t: t[:500], "str"),
    ("json:dumps", "str"),
    (lambda t: {"a": t}, "dict"),
    (lambda t: 3, "int"),
])
def test_a_return_that_is_not_a_list_is_refused_naming_its_type(files, chunker, kind):
    with pytest.raises(RagcovError) as err:
        build_cited_task(files["acts"], files["questions"], chunker=chunker)
    msg = str(err.value)
    assert f"returned a {kind} for act 'lei-10-2000', not a list of chunks" in msg
    assert "(start, end)" in msg and "is not in act" not in msg


def test_a_str_return_is_refused_through_load_dataset(files, tmp_path):
    with pytest.raises(RagcovError, match="returned a str .* a str return would make every character a chunk"):
        _load(files, tmp_path, lambda t: t)


# --------------------------------------------------------------------------- config names and options


def test_a_config_name_and_a_contradicting_option_are_refused(data_dir, tmp_path):
    with pytest.raises(RagcovError) as err:
        load_dataset("aneel_taesa", "chunks-400", data_dir=data_dir, cache_dir=tmp_path, chunk_words=100)
    msg = str(err.value)
    assert "the config 'chunks-400' means chunk_words=400" in msg and "chunk_words=100" in msg
    with pytest.raises(RagcovError, match="the config 'dispositivo-200' means max_words=200"):
        load_dataset("aneel_taesa", "dispositivo-200", data_dir=data_dir, cache_dir=tmp_path, max_words=300)
    same = load_dataset("aneel_taesa", "chunks-400", data_dir=data_dir, cache_dir=tmp_path, chunk_words=400)
    assert same["corpus"].info.config_name == "chunks-400"


def test_any_chunks_n_names_a_size_as_the_readme_says(data_dir, tmp_path):
    ds = load_dataset("aneel_taesa", "chunks-200", data_dir=data_dir, cache_dir=tmp_path)
    ref = load_dataset("aneel_taesa", data_dir=data_dir, cache_dir=tmp_path, chunk_words=200)
    assert ds["corpus"].info.config_name == "chunks-200"
    assert ds["corpus"]["_id"] == ref["corpus"]["_id"] and ds["corpus"]["text"] == ref["corpus"]["text"]
    words = [len(t.split()) for t in ds["corpus"]["text"]]
    assert max(words) <= 200 + 19 and sorted(words)[len(words) // 2] == 200
    q30 = load_dataset("aneel_taesa", "chunks-200-q30", data_dir=data_dir, cache_dir=tmp_path)
    assert all(len(q.split()) == 30 for q in q30["queries"]["text"][:50])


# --------------------------------------------------------------------------- the cited-questions task's own limits


def test_words_below_query_words_gets_the_cited_reason(files):
    with pytest.raises(RagcovError) as err:
        build_cited_task(files["acts"], files["questions"], chunker="words-5")
    msg = str(err.value)
    assert "words-5: a word window must hold at least query_words (20) words" in msg
    assert "use words-20 or more, or give query_words=5" in msg and "a query is the first" not in msg
    task = build_cited_task(files["acts"], files["questions"], chunker="words-5", query_words=5, warn=False)
    assert task.corpus["text"].str.split().str.len().max() <= 9


def test_acts_saved_in_nfd_are_the_same_acts(data_dir, tmp_path):
    folder = irpf_dir(data_dir)
    text = (folder / "laws.jsonl").read_text(encoding="utf-8")
    got = {}
    for form in ("NFC", "NFD"):
        p = tmp_path / f"{form}.jsonl"
        p.write_text(unicodedata.normalize(form, text), encoding="utf-8")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got[form] = build_cited_task(p, folder / "questions.jsonl", chunking="dispositivo")
    nfc, nfd = got["NFC"], got["NFD"]
    assert len(nfd.corpus) == len(nfc.corpus) and nfd.corpus["unit"].tolist() == nfc.corpus["unit"].tolist()
    assert nfd.qrels.equals(nfc.qrels)
    assert nfd.documents["text"].map(lambda t: unicodedata.is_normalized("NFC", t)).all()


def test_a_reference_level_given_as_a_list_says_its_type(files):
    questions = [{"qid": "q1", "question": "Quais artigos?",
                  "references": [{"doc_id": "lei-10-2000", "article": ["1", "2"]}]}]
    with pytest.raises(InputFileError) as err:
        build_cited_task(files["acts"], questions, gold="references")
    msg = str(err.value)
    assert "`article` of a reference must be one string or number" in msg and "got a list ['1', '2']" in msg
    assert "one reference each" in msg
