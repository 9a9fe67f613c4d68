"""JurisTCU adapter on the shared 2023 files and on a 2025-layout fixture built from them."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

from ragcov_data.errors import InputFileError, RagcovError
from ragcov_data.loaders.juristcu import (
    GROUPS,
    SUBSET_NOTE,
    JurisTCUBuilder,
    JurisTCUConfig,
    clean_text,
    read_juristcu,
)
from ragcov_data.tasks.record import manifest_of


@pytest.fixture(scope="module")
def shared(juristcu_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the shared subset must load without any warning
        return read_juristcu(juristcu_dir)


@pytest.fixture(scope="module")
def built(juristcu_dir, tmp_path_factory):
    b = JurisTCUBuilder(data_dir=juristcu_dir.parent, cache_dir=str(tmp_path_factory.mktemp("hf")))
    b.download_and_prepare()
    return b.as_dataset()


def _raw(juristcu_dir, name):
    return pd.read_csv(juristcu_dir / name, dtype=str, keep_default_na=False)


def _write_2025(folder, juristcu_dir, sep="|", docs=None, qrels=None):
    """A 2025-layout copy: KEY ids, ENUNCIADO/EXCERTO with HTML, metadata, qrels without ENGINE/RANK."""
    folder.mkdir(parents=True, exist_ok=True)
    d = _raw(juristcu_dir, "doc.csv") if docs is None else docs
    out = pd.DataFrame({
        "KEY": "JURISPRUDENCIA-SELECIONADA-" + d["ID"],
        "AREA": np.where(d["ID"].astype(int) % 2 == 0, "Licitação", "Pessoal"),
        "TEMA": "Tema " + d["ID"],
        "ENUNCIADO": "<p>" + d["TEXT"] + "</p>",
        "EXCERTO": "<p>Excerto do <b>Acórdão</b> " + d["ID"] + ":</p>\n<p>" + d["TEXT"].str[:40] + " &amp; mais</p>",
        "NUMACORDAO": d["ID"],
        "ANOACORDAO": "2020",
    })
    out.to_csv(folder / "doc.csv", sep=sep, index=False)
    _raw(juristcu_dir, "query.csv").to_csv(folder / "query.csv", index=False)
    q = _raw(juristcu_dir, "qrel.csv")[["QUERY_ID", "DOC_ID", "SCORE"]] if qrels is None else qrels
    q.to_csv(folder / "qrel.csv", index=False)
    return folder


# ---- 2023 layout, shared files ----------------------------------------------------------
def test_shared_counts_groups_grades(shared):
    frames, man = shared
    corpus, queries, qrels = frames["corpus"], frames["queries"], frames["qrels"]
    assert (len(corpus), len(queries), len(qrels)) == (3022, 150, 2250)
    assert man["layout"] == "2023"
    assert queries["group"].value_counts().to_dict() == {"G1": 50, "G2": 50, "G3": 50}
    assert qrels["score"].value_counts().sort_index().to_dict() == {0: 430, 1: 528, 2: 513, 3: 779}
    assert man["counts"]["grades"] == {"0": 430, "1": 528, "2": 513, "3": 779}
    assert man["corpus_note"] == SUBSET_NOTE and "3,022" in SUBSET_NOTE and "not comparable" in SUBSET_NOTE


def test_shared_group_mapping_follows_source(shared, juristcu_dir):
    queries = shared[0]["queries"]
    raw = _raw(juristcu_dir, "query.csv")
    assert list(queries["_id"]) == list(raw["ID"])
    assert list(queries["group"]) == [GROUPS[s] for s in raw["SOURCE"]]
    ids = queries["_id"].astype(int)
    assert (ids[queries["group"] == "G1"] <= 50).all() and (ids[queries["group"] == "G3"] > 100).all()


def test_every_judged_document_resolves_in_the_subset(shared):
    frames, man = shared
    assert man["unknown_ids"]["unknown_documents"] == {"rows": 0, "ids": 0, "examples": []}
    assert man["unknown_ids"]["unknown_queries"]["rows"] == 0
    assert set(frames["qrels"]["corpus-id"]) <= set(frames["corpus"]["_id"])
    assert man["counts"]["judged_documents"] == 1651


def test_source_key_pairs_g2_with_g3_plus_50(shared):
    q = shared[0]["queries"].set_index("_id")
    for i in range(51, 101):
        assert q.loc[str(i), "group"] == "G2" and q.loc[str(i + 50), "group"] == "G3"
        assert q.loc[str(i), "source_key"] == q.loc[str(i + 50), "source_key"] == f"s{i:03d}"
    assert q["source_key"].nunique() == 100  # 50 G1 singletons + 50 G2/G3 pairs
    assert q.loc[q["group"] == "G1", "source_key"].is_unique


def test_source_key_pairing_is_confirmed_by_texts(shared):
    """Each G2 keyword query overlaps its own G3 partner more than any other G3 question."""
    q = shared[0]["queries"]
    words = [set(re.findall(r"\w+", t.lower())) for t in q["text"]]
    g2 = np.flatnonzero(q["group"] == "G2")
    g3 = np.flatnonzero(q["group"] == "G3")
    overlap = np.array([[len(words[a] & words[b]) / len(words[a]) for b in g3] for a in g2])
    best = g3[overlap.argmax(axis=1)]
    assert (q["source_key"].to_numpy()[best] == q["source_key"].to_numpy()[g2]).all()


def test_builder_splits_features_and_records(built, juristcu_dir):
    assert set(built) == {"corpus", "queries", "qrels"}
    assert list(built["corpus"].features) == ["_id", "doc_id", "chunk_index", "text"]
    assert list(built["queries"].features) == ["_id", "text", "group", "source_key", "source"]
    assert {k: v.dtype for k, v in built["qrels"].features.items()} == {
        "query-id": "string", "corpus-id": "string", "score": "int64", "engine": "string", "rank": "int64"}
    raw_docs, raw_q = _raw(juristcu_dir, "doc.csv"), _raw(juristcu_dir, "qrel.csv")
    for i in (0, 9, len(raw_docs) - 1):
        rec = built["corpus"][i]
        assert rec["_id"] == rec["doc_id"] == raw_docs["ID"][i] and rec["chunk_index"] == 0
        assert rec["text"] == clean_text(raw_docs["TEXT"][i])
    last = built["qrels"][len(raw_q) - 1]
    assert last == {"query-id": raw_q["QUERY_ID"].iloc[-1], "corpus-id": raw_q["DOC_ID"].iloc[-1],
                    "score": int(raw_q["SCORE"].iloc[-1]), "engine": raw_q["ENGINE"].iloc[-1],
                    "rank": int(raw_q["RANK"].iloc[-1])}
    man = manifest_of(built)
    assert man["counts"]["queries_per_group"] == {"G1": 50, "G2": 50, "G3": 50}
    assert len(man["sources"]) == 3 and all(len(s["sha256"]) == 64 for s in man["sources"])


def test_html_in_2023_texts_is_stripped(shared, juristcu_dir):
    raw = _raw(juristcu_dir, "doc.csv").set_index("ID")["TEXT"]
    corpus = shared[0]["corpus"].set_index("_id")["text"]
    tagged = raw[raw.str.contains("<i>")]
    assert len(tagged) > 10
    assert not corpus[tagged.index].str.contains(r"<i>|</i>").any()
    thc = raw[raw.str.contains("<i>Terminal Handling Charge</i>")].index
    assert len(thc) >= 1 and "A THC (Terminal Handling Charge ou" in corpus[thc[0]]


def test_excerto_config_needs_2025_layout(juristcu_dir):
    with pytest.raises(RagcovError, match=r"2023 layout has only the enunciado.*Use config 'enunciado'"):
        read_juristcu(juristcu_dir, "excerto")


def test_config_validation():
    with pytest.raises(RagcovError, match=r"must be one of \['both', 'enunciado', 'excerto'\]; got 'summary'"):
        JurisTCUConfig(name="summary")


# ---- 2025 layout --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def dir2025(juristcu_dir, tmp_path_factory):
    return _write_2025(tmp_path_factory.mktemp("j2025") / "juristcu", juristcu_dir)


def test_2025_layout_enunciado(dir2025, juristcu_dir):
    frames, man = read_juristcu(dir2025)
    corpus = frames["corpus"]
    raw = _raw(juristcu_dir, "doc.csv")
    assert man["layout"] == "2025" and man["rules"]["doc_id"] == "trailing number of KEY"
    assert list(corpus["_id"]) == list(raw["ID"])  # KEY's trailing number = the qrels' DOC_ID
    assert man["unknown_ids"]["unknown_documents"]["rows"] == 0
    assert list(corpus.columns) == ["_id", "doc_id", "chunk_index", "text", "key", "area", "tema",
                                    "numacordao", "anoacordao"]
    assert corpus["key"].iloc[0] == "JURISPRUDENCIA-SELECIONADA-" + raw["ID"].iloc[0]
    assert not corpus["text"].str.contains("<p>").any()
    assert corpus["text"].iloc[0] == clean_text(raw["TEXT"].iloc[0])
    assert frames["qrels"]["engine"].isna().all() and frames["qrels"]["rank"].isna().all()
    assert frames["qrels"]["score"].value_counts().sort_index().tolist() == [430, 528, 513, 779]


def test_2025_layout_excerto_and_both(dir2025, juristcu_dir):
    raw = _raw(juristcu_dir, "doc.csv")
    ex = read_juristcu(dir2025, "excerto")[0]["corpus"]["text"]
    want = f"Excerto do Acórdão {raw['ID'][0]}: {raw['TEXT'][0][:40].strip()} & mais"
    assert ex.iloc[0] == re.sub(r"\s+", " ", want)
    both = read_juristcu(dir2025, "both")[0]["corpus"]["text"]
    en = read_juristcu(dir2025, "enunciado")[0]["corpus"]["text"]
    assert both.iloc[0] == en.iloc[0] + "\n\n" + ex.iloc[0]


def test_2025_layout_through_builder_and_comma_separator(juristcu_dir, tmp_path):
    folder = _write_2025(tmp_path / "comma", juristcu_dir, sep=",")
    b = JurisTCUBuilder(config_name="both", data_dir=folder, cache_dir=str(tmp_path / "hf"))
    b.download_and_prepare()
    ds = b.as_dataset()
    assert list(ds["corpus"].features) == ["_id", "doc_id", "chunk_index", "text", "key", "area", "tema",
                                           "numacordao", "anoacordao"]
    assert ds["corpus"][0]["area"] in {"Licitação", "Pessoal"}
    assert "\n\n" in ds["corpus"][0]["text"]
    assert ds["qrels"][0]["rank"] is None
    assert manifest_of(ds)["config"]["name"] == "both"


def test_unknown_layout_lists_columns(juristcu_dir, tmp_path):
    folder = _write_2025(tmp_path / "bad", juristcu_dir)
    pd.DataFrame({"DOCID": ["1"], "BODY": ["x"]}).to_csv(folder / "doc.csv", index=False)
    with pytest.raises(InputFileError, match=r"doc\.csv: unknown JurisTCU layout; columns found \['DOCID', 'BODY'\], "
                                             r"expected \(2023: \['ID', 'TEXT'\]; 2025: \['KEY or ID', 'ENUNCIADO'"):
        read_juristcu(folder)
    pd.DataFrame({"QID": ["1"], "DOC": ["2"]}).to_csv(folder / "qrel.csv", index=False)
    _write_2025(folder, juristcu_dir, qrels=pd.DataFrame({"QID": ["1"], "DOC": ["2"]}))
    with pytest.raises(InputFileError, match=r"qrel\.csv: unknown JurisTCU layout.*found \['QID', 'DOC'\].*"
                                             r"Missing: \['QUERY_ID', 'DOC_ID', 'SCORE'\]"):
        read_juristcu(folder)


def test_unknown_qrel_ids_are_reported(juristcu_dir, tmp_path):
    docs = _raw(juristcu_dir, "doc.csv")
    qrels = _raw(juristcu_dir, "qrel.csv")[["QUERY_ID", "DOC_ID", "SCORE"]]
    dropped = qrels["DOC_ID"].drop_duplicates().iloc[:7].tolist()
    extra = pd.DataFrame({"QUERY_ID": ["999"], "DOC_ID": [docs["ID"].iloc[-1]], "SCORE": ["2"]})
    folder = _write_2025(tmp_path / "unk", juristcu_dir, docs=docs[~docs["ID"].isin(dropped)],
                         qrels=pd.concat([qrels, extra], ignore_index=True))
    n_rows = int(qrels["DOC_ID"].isin(dropped).sum())
    with pytest.warns(UserWarning, match=rf"{n_rows} qrels name 7 unknown documents.*1 qrels name 1 unknown queries"):
        frames, man = read_juristcu(folder)
    unk = man["unknown_ids"]
    assert unk["unknown_documents"]["rows"] == n_rows and unk["unknown_documents"]["ids"] == 7
    assert unk["unknown_documents"]["examples"] == dropped[:5]
    assert unk["unknown_queries"] == {"rows": 1, "ids": 1, "examples": ["999"]}
    assert len(frames["qrels"]) == len(qrels) + 1  # kept, not dropped
    with pytest.raises(InputFileError, match=r"qrel\.csv: .*7 unknown documents.*strict=False"):
        read_juristcu(folder, strict=True)


def test_unknown_source_and_bad_score(juristcu_dir, tmp_path):
    folder = _write_2025(tmp_path / "src", juristcu_dir)
    q = _raw(juristcu_dir, "query.csv")
    q.loc[3, "SOURCE"] = "forum"
    q.to_csv(folder / "query.csv", index=False)
    with pytest.raises(InputFileError, match=r"query\.csv: row 5 \(query '4'\) has SOURCE 'forum'; known values"):
        read_juristcu(folder)
    _raw(juristcu_dir, "query.csv").to_csv(folder / "query.csv", index=False)
    r = _raw(juristcu_dir, "qrel.csv")
    r.loc[10, "SCORE"] = "2.5"
    r.to_csv(folder / "qrel.csv", index=False)
    with pytest.raises(InputFileError, match=r"qrel\.csv: line 12 \(QUERY_ID '\d+', DOC_ID '\d+'\) has SCORE '2\.5': "
                                             r"not an integer .*grades are integers 0\.\.3"):
        read_juristcu(folder)


def test_data_dir_resolution(juristcu_dir, monkeypatch, tmp_path):
    a = read_juristcu(juristcu_dir)[1]["sources"]
    b = read_juristcu(juristcu_dir.parent)[1]["sources"]
    monkeypatch.setenv("RAGCOV_DATA_DIR", str(juristcu_dir.parent))
    c = read_juristcu(None)[1]["sources"]
    assert a == b == c
    with pytest.raises(InputFileError, match=r"lacks \['doc\.csv', 'query\.csv', 'qrel\.csv'\]"):
        read_juristcu(tmp_path)


def test_cache_is_keyed_by_file_content(juristcu_dir, tmp_path):
    folder = _write_2025(tmp_path / "c", juristcu_dir)
    cache = str(tmp_path / "hf")
    b1 = JurisTCUBuilder(data_dir=folder, cache_dir=cache)
    b1.download_and_prepare()
    q = _raw(juristcu_dir, "query.csv")
    q.loc[0, "TEXT"] = "licitação dispensada"
    q.to_csv(folder / "query.csv", index=False)
    b2 = JurisTCUBuilder(data_dir=folder, cache_dir=cache)
    assert b2.hash != b1.hash
    b2.download_and_prepare()
    assert b2.as_dataset()["queries"][0]["text"] == "licitação dispensada"


def test_load_dataset_entry_point(juristcu_dir, tmp_path):
    import ragcov_data

    ds = ragcov_data.load_dataset("juristcu", data_dir=juristcu_dir.parent, cache_dir=tmp_path, show_progress=False)
    assert (ds["corpus"].num_rows, ds["queries"].num_rows, ds["qrels"].num_rows) == (3022, 150, 2250)
    assert manifest_of(ds)["config"]["name"] == "enunciado"
    with pytest.raises(RagcovError, match=r"2023 layout has only the enunciado"):
        ragcov_data.load_dataset("juristcu", "both", data_dir=juristcu_dir, cache_dir=tmp_path, show_progress=False)
