"""The parser of Brazilian normative text: where each dispositivo of an act starts (:func:`find_boundaries`).

The rules it follows are those of :mod:`ragcov_data.loaders.dispositivos` (:data:`~ragcov_data.loaders.
dispositivos.BOUNDARY_RULE`, :data:`~ragcov_data.loaders.dispositivos.SPECIAL_RULES`), whose module docstring
states them in full; that module turns the boundaries into chunks.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from ragcov_data.legal.roman import roman_value

_ROMAN = re.compile(r"^(?=[MDCLXVI])M{0,3}(CM|CD|D?C{0,3})(XC|XL|L?X{0,3})(IX|IV|V?I{0,3})$")
_DASHES = "-–—−‐‑"
_OPEN_Q = "“\x93«\""
_CLOSE_Q = "”\x94»\"'’"
# a number with its ordinal and letter suffix: 1º, 10., 1º-A, 2o, 1.000, 3-A
_NUM = re.compile(r"^(\d{1,4}(?:\.\d{3})*)([º°ªo]|\.[º°])?(?:-?([A-Z]))?[.:]?$")
_ART = re.compile(r"^(?:Art|ART|Artigo|ARTIGO)(?:\.|\b)(.*)$")
_RT = re.compile(r"^rt\.()$")
_INCISO = re.compile(r"^([IVXLCDM]+)([-–—−‐‑])?(.*)$")
#: What follows ``V-`` in an inserted inciso's marker: its letter, and the dash when glued (``V-A``, ``V-A–``).
_INCISO_SUFFIX = re.compile(r"^([A-Z])([-–—−‐‑])?$")
_ALINEA = re.compile(r"^([a-z])\)(.*)$")
_ITEM = re.compile(r"^(\d{1,3})[.)](\D.*)?$")
_HEADINGS = {"TÍTULO": "título", "CAPÍTULO": "capítulo", "LIVRO": "livro", "SEÇÃO": "seção", "Seção": "seção",
             "SUBSEÇÃO": "subseção", "Subseção": "subseção"}
_ANNEX = {"ANEXO", "Anexo", "ANEXOS"}
_UNICO = {"único", "única", "ÚNICO", "ÚNICA", "Único", "Única"}
_ABBREV = {"art.", "arts.", "inc.", "al.", "n.", "nº.", "no.", "n.º", "p.", "pág.", "fl.", "fls.", "cf.", "sr.",
           "sra.", "dr.", "dra.", "prof.", "av.", "ex.", "obs.", "min.", "máx.", "etc.:"}
_CITATION_WORDS = {
    "do", "da", "dos", "das", "no", "na", "nos", "nas", "ao", "aos", "à", "às", "o", "a", "os", "as", "pelo", "pela",
    "pelos", "pelas", "de", "em", "e", "ou", "conforme", "segundo", "com", "que", "art.", "arts.", "artigo", "artigos",
    "inciso", "incisos", "alínea", "alíneas", "parágrafo", "parágrafos", "termos", "vide", "ver", "cf.", "este",
    "esta", "deste", "desta", "neste", "nesta", "referido", "referida", "previsto", "prevista", "mencionado",
    "mencionada", "constante", "constantes", "sobre", "entre", "até", "por", "seu", "sua", "respectivo",
    "respectiva", "o(s)", "a(s)",
}
_BLOCK_ID = re.compile(r"^\^[0-9a-z]{4,8}$")
_ANNOTATION = re.compile(r"^\((?:reda[çc][ãa]o|inclu[íi]d|inclus[ãa]o|revogad|vetad|vide|nr\b|vig[êe]ncia|regulamento|acrescid|"
                         r"renumerad|alterad|suprimid|produ[çc][ãa]o|promulga|declarad|express|suspens|"
                         r"ratificad|convertid|transformad|mantid)", re.I)


@dataclass(frozen=True)
class Boundary:
    """Where a dispositivo starts: word index, kind and label path (e.g. ``("art. 2", "I", "a")``)."""

    start: int
    kind: str  # heading, annex, art, par, inc, ali, item
    path: tuple[str, ...]

    @property
    def label(self) -> str:
        """The unit label: ``"art. 2 > I > a"``."""
        return " > ".join(self.path)


# --------------------------------------------------------------------------- words and lines


def words_and_line_starts(text: str) -> tuple[list[str], bytearray]:
    """The words of ``text`` (exactly ``text.split()``) and a flag per word: does it start a line?

    A text without any line break flags every word (its line structure is unknown)."""
    words: list[str] = []
    starts = bytearray()
    for line in text.splitlines():
        ws = line.split()
        if ws:
            starts.append(1)
            starts.extend(bytes(len(ws) - 1))
            words.extend(ws)
    if len(starts) and starts.count(1) == 1:
        starts = bytearray(b"\x01" * len(words))
    return words, starts


def _roman(s: str) -> int | None:
    if not s or not _ROMAN.match(s):
        return None
    return roman_value(s)


def _strip_close(tok: str) -> str:
    return tok.rstrip(_CLOSE_Q)


def _closes_clause(words: Sequence[str], i: int) -> bool:
    """Does the text before word ``i`` end a sentence or clause (rule 2, without the heading-title case)?"""
    if i == 0:
        return True
    prev = words[i - 1]
    if _BLOCK_ID.match(prev):  # a Markdown clip's block id ("^e10rf7") ends the line it marks
        return _closes_clause(words, i - 1)
    if "](" in prev:  # a Markdown link: "2022)](https://...)" is the annotation "(... 2022)"
        prev = prev[:prev.index("](")] + "]"
    bare = _strip_close(prev)
    if not bare and i >= 2:  # a closing quote alone: what it closes
        prev = words[i - 2] + prev
        bare = _strip_close(prev)
    if bare and bare[-1] in ".:;!?…" and prev.lower() not in _ABBREV and bare.lower() not in _ABBREV:
        return True
    if prev in ("(NR)", "(NR).", "(...)", "(…)", "[...]"):
        return True
    if bare.endswith((")", ").", "]", "].")):
        at = _opening_bracket(words, i, prev, "(" if ")" in bare[-2:] else "[")
        return at is not None and bool(_ANNOTATION.match("(" + at.lstrip("[(")))
    if (re.fullmatch(r"\d{4}\)?\.?", bare) or prev == "Vigência") and _bare_annotation(words, i - 1):
        return True  # planalto's annotation as bare links: "Revogado pelo / Decreto nº 10.854, de 2021"
    if prev in ("Vigência", "Regulamento", "encerrada") and i >= 2 and _closes_clause(words, i - 1):
        return True  # planalto's annotation links after "(Incluído pela Lei ...)"
    if prev.strip("()") == "efeitos" and i >= 4 and [w.strip("()") for w in words[i - 3:i]] == [
            "Produção", "de", "efeitos"] and _closes_clause(words, i - 3):
        return True  # "... (Redação dada pela ...) Produção de efeitos"
    if prev in ("e", "ou", "e/ou") and i >= 2 and _strip_close(words[i - 2])[-1:] in ";,":
        return True
    if prev in ("(NR)", "(NR).", "(...)", "(…)", "[...]"):
        return True
    return False


def _opening_bracket(words: Sequence[str], i: int, prev: str, opening: str, reach: int = 60) -> str | None:
    """The text from the bracket that opens the one closing word ``i - 1`` (``prev``), balanced, so a nested
    annotation (``(Redação dada por Republicação … (Seq. 1) (Diário Oficial … (p. 1, col. 1)))``) is read from
    its outer opening; None when it opens more than ``reach`` words back."""
    closing = ")" if opening == "(" else "]"
    depth = 0
    for j in range(i - 1, max(i - 1 - reach, -1), -1):
        w = prev if j == i - 1 else words[j]
        for k in range(len(w) - 1, -1, -1):
            if w[k] == closing:
                depth += 1
            elif w[k] == opening:
                depth -= 1
                if depth <= 0:
                    return w[k:]
    return None


_BARE_NOTE = {"Revogado", "Revogada", "Revogados", "Revogadas", "Incluído", "Incluída", "Incluídos", "Incluídas",
              "Acrescido", "Acrescida", "Acrescidos", "Renumerado", "Renumerada", "Suprimido", "Suprimida"}


def _bare_annotation(words: Sequence[str], end: int) -> bool:
    """Do the words up to ``end`` (its last word a year) close an annotation printed without brackets
    (``Revogado pelo Decreto nº 10.854, de 2021``, ``Redação dada pela Lei nº 1, de 2021``)? It opens at
    most 15 words back, with no sentence end between."""
    for j in range(end - 1, max(end - 16, -1), -1):
        w, nxt = words[j], words[j + 1]
        if (w in _BARE_NOTE and nxt in ("pelo", "pela", "pelos", "pelas")) or (w == "Redação" and nxt == "dada"):
            return True
        if w[-1:] in ".;:" and w.lower() not in _ABBREV and not re.fullmatch(r"\d[\d.]*\.\d+", w):
            return False
    return False


def _parse_number(words: Sequence[str], j: int, rest: str | None) -> tuple[tuple[int, str], str, int] | None:
    """The number of an ``Art.``/``§`` marker: ``((n, letter), label, next word index)``, or None.

    ``rest`` is what follows the marker in its own word (``Art.1º`` -> ``"1º"``), else the number is word ``j``.
    """
    if rest:
        tok, nxt = rest, j
    elif j < len(words):
        tok, nxt = words[j], j + 1
    else:
        return None
    m = _NUM.match(tok)
    if not m and tok.endswith(".."):  # "6º......": the number of an article quoted in part
        m = _NUM.match(tok.rstrip("."))
    if not m:
        return None
    if not m.group(2) and nxt < len(words) and words[nxt] in ("o", "º", "°", "o.", "º.", "°."):
        nxt += 1  # "Art. 1 o": OCR splits the ordinal off
    n = int(m.group(1).replace(".", ""))
    letter = m.group(3) or ""
    return (n, letter), f"{n}-{letter}" if letter else str(n), nxt


def _text_goes_on(words: Sequence[str], j: int) -> bool:
    """After an artigo, parágrafo or heading: the next word is not lower case (else it is a citation)."""
    if j >= len(words):
        return False
    w = words[j].lstrip(_OPEN_Q + "(['")
    if not w:
        return True
    c = w[0]
    return not c.islower()


# --------------------------------------------------------------------------- the parser


class _Frame:
    """Numbering state of one act (the document, an ANEXO, a quoted amendment)."""

    def __init__(self, prefix: tuple[str, ...] = (), end: int | None = None) -> None:
        self.prefix = prefix
        self.end = end  # word index where a quoted frame closes
        self.art: tuple[int, str] | None = None
        self.art_label: str | None = None
        self.par: tuple[int, str] | None = None
        self.par_label: str | None = None
        self.inc: tuple[int, str] | None = None  # (numeral, letter of an inserted inciso: "V-A" -> (5, "A"))
        self.inc_label: str | None = None
        self.ali: str | None = None
        self.item: int | None = None

    def path(self, level: int) -> tuple[str, ...]:
        parts = [self.art_label, self.par_label, self.inc_label, self.ali, None if self.item is None else str(self.item)]
        out = [p for p in parts[:level] if p is not None]
        return self.prefix + tuple(out)


def _next_artigo_at(words: Sequence[str], j: int, next_art: int) -> bool:
    """Does artigo number ``next_art`` (the amending act's next one) start at word ``j``, a line start?"""
    w = words[j]
    if not (w.startswith(("Art", "ART")) and _closes_clause(words, j)):
        return False
    m = _ART.match(w)
    num = _parse_number(words, j + 1, m.group(1)) if m else None
    return num is not None and num[0][0] == next_art


def _quote_end(words: Sequence[str], starts: Sequence[int], i: int, next_art: int) -> int | None:
    """Index of the word after the quoted block opening at word ``i``: after its closing quote (and a
    ``(NR)``), or, when the closing quote was lost, the line where the amending act's next artigo
    (number ``next_art``) starts. None when neither is found."""
    depth = 0
    for j in range(i, len(words)):
        w = words[j]
        if j > i and starts[j] and _next_artigo_at(words, j, next_art):
            return j
        depth += w.count("“") + w.count("\x93") + w.count("«") + (w[0] == '"')
        depth -= w.count("”") + w.count("\x94") + w.count("»") + (len(w) > 1 and w[-1] == '"' or w == '"' and j > i)
        if w.startswith("(NR)"):
            return j + 1
        if depth <= 0 and j > i:
            if j + 1 < len(words) and words[j + 1].startswith("(NR)"):
                return j + 2
            return j + 1
    return None


_CAND_FIRST = set("AaPpS§TCLIVXLCDM“\x93«\"0123456789abcdefghijklmnopqrstuvwxyz")


def find_boundaries(text_or_words: str | Sequence[str], line_starts: Sequence[int] | None = None) -> list[Boundary]:
    """The dispositivos of a normative text, in order (see the module docstring for the rules).

    Parameters
    ----------
    text_or_words : str or list of str
        The text, or its words (then ``line_starts`` flags the words that start a line).

    Returns
    -------
    list of Boundary
        Word index, kind and label path of every dispositivo found; empty for a text with no structure.
    """
    if isinstance(text_or_words, str):
        words, starts = words_and_line_starts(text_or_words)
    else:
        words = list(text_or_words)
        starts = bytearray(line_starts) if line_starts is not None else bytearray(b"\x01" * len(words))
    scan = _Scan(words, starts)
    i, n = 0, len(words)
    while i < n:
        i = scan.step(i)
    return scan.out


class _Scan:
    """The state of one left-to-right pass of :func:`find_boundaries` over an act's words."""

    def __init__(self, words: list[str], starts: bytearray) -> None:
        self.words, self.starts, self.n = words, starts, len(words)
        self.out: list[Boundary] = []
        self.top = _Frame()  # the act (replaced at each ANEXO)
        self.frame = self.top  # top, or a quoted amendment inside it
        self.heading_at: int | None = None  # start of the last heading, while its title runs
        self.closed_at = -1  # where the last quoted amendment closed: a boundary may follow whatever ends it
        self.last_end = -1  # word after the last accepted marker (a stub "(VETADO)." runs from there)
        self.art_at = -1  # start of the act's current artigo (its caput may announce an insertion)
        # a voto's own numbered paragraphs: artigos are quotes
        self.transcribed: tuple[int, int] | None = _transcribed_from(words, starts)

    def step(self, i: int) -> int:
        """Read the word at ``i``: record the dispositivo it starts, if any; return the next word to read."""
        words, frame = self.words, self.frame
        if frame is not self.top and i >= frame.end:  # type: ignore[operator]
            self.closed_at, self.frame = frame.end, self.top
        w = words[i]
        if not self._may_start(i, w) or w[0] not in _CAND_FIRST:
            return i + 1
        quoted, k = False, i  # an opening quote before the marker, alone or glued to it
        if w in ("“", "\x93", "«", '"'):
            if i + 1 >= self.n:
                return self.n
            quoted, k, w = True, i + 1, words[i + 1]
        elif w[0] in _OPEN_Q and len(w) > 1:
            quoted, w = True, w[1:]
        hit = _match(words, k, w, self.frame)
        if hit is None:
            return i + 1
        kind, _, key, _, _, _ = hit
        if self.transcribed is not None and i >= self.transcribed[0] and kind != "annex":
            return i + 1  # an artigo a voto or nota técnica transcribes: not the document's own
        if not self._accepted(i, w, kind, key, quoted):
            return i + 1
        if quoted and self.frame is self.top:  # a quoted amendment opens: numbered on its own, inside the artigo
            hit = self._open_quote(i, k, w)
            if hit is None:
                return i + 1
        return self._record(i, *hit)

    def _may_start(self, i: int, w: str) -> bool:
        """Whether a dispositivo may start at ``i``: at a line start (where a caput announcing an insertion
        opens the inserted text's frame), or mid-line only as the next dispositivo after a stub
        ("Art. 19. (VETADO). Art. 20. ...")."""
        words, top = self.words, self.top
        if not self.starts[i]:
            return not (i - self.last_end > 31 or w[0] not in "AP§IVXLC" or not _after_stub(words, self.last_end, i))
        if (self.frame is top and top.art is not None and self.art_at >= 0 and i > 0 and words[i - 1][-1:] == ":"
                and _announces_insertion(words, self.art_at, i)):
            end = _insertion_end(words, self.starts, i, top.art[0] + 1)  # text inserted into another act
            if end is not None and end > i:
                self.frame = _Frame(top.path(5), end)
        return True

    def _accepted(self, i: int, w: str, kind: str, key: object, quoted: bool) -> bool:
        """Whether the marker at ``i`` is placed as a dispositivo: after a closed clause, in a heading's
        title, as a capitalised heading, or as the sequel of the current numbering."""
        words, frame = self.words, self.frame
        clause = i == self.closed_at or _closes_clause(words, i)
        heading_at = self.heading_at
        in_title = heading_at is not None and i - heading_at <= 60 and not any(
            _strip_close(x)[-1:] in ".:;" for x in words[heading_at:i])
        relaxed = (kind in ("heading", "annex") and w.isupper() and not quoted and i > 0
                   and words[i - 1].lower() not in _CITATION_WORDS and words[i - 1][-1:] not in ",-–")
        sequel = (kind in ("art", "par") and i > 0 and words[i - 1].lower() not in _CITATION_WORDS
                  and words[i - 1][-1:] not in ",-–"
                  and (_is_sequel(frame, kind, key) or (frame is not self.top and _plausible(frame, kind, key))
                       or (kind == "art" and frame.art is None and self.starts[i] and not quoted)))
        if w == "rt." and not (_is_sequel(frame, kind, key) and (clause or in_title or sequel)):
            return False  # "rt. 758." (a lost A) only as the very next artigo
        return bool(clause or in_title or relaxed or sequel)

    def _open_quote(self, i: int, k: int, w: str) -> tuple | None:
        """Open the frame of a quoted amendment at ``i`` (inside the current artigo) and match its marker
        there; None (the frame left as it was) when the quote has no end or the marker no place in it."""
        top = self.top
        end = None if top.art is None else _quote_end(self.words, self.starts, i, top.art[0] + 1)
        if end is None:
            return None
        self.frame = _Frame(top.path(5), end)
        hit = _match(self.words, k, w, self.frame)
        if hit is None:
            self.frame = top
        return hit

    def _record(self, i: int, kind: str, level: int, key: object, label: str, nxt: int, last: object) -> int:
        """Record the dispositivo at ``i`` (an annex opens a new act, a heading a title); return the next
        word to read."""
        frame = self.frame
        if kind == "annex":
            if frame is not self.top:
                return i + 1
            self.top = self.frame = _Frame((label,))
            self.out.append(Boundary(i, kind, (label,)))
            self.heading_at = i
            if self.transcribed is not None and i > self.transcribed[1]:
                self.transcribed = None  # after the voto, an annexed act has its own artigos
            self.last_end = nxt
            return nxt
        if kind == "heading":
            self.out.append(Boundary(i, kind, frame.prefix + (label,)))
            self.heading_at = i
            self.last_end = nxt
            return nxt
        if not _plausible(frame, kind, key) and not (_same_number(frame, kind, key)
                                                     and _new_wording(self.words, self.starts, nxt)):
            return i + 1
        _advance(frame, kind, last, label)
        if kind == "art" and frame is self.top:
            self.art_at = i
        self.out.append(Boundary(i, kind, frame.path(level)))
        self.heading_at = None
        self.last_end = nxt
        return nxt


_INSERTS = re.compile(r"\b(?:passa(?:m|r[aã]o)? a vigorar|(?:fica|ficam|é|são) (?:acrescid|acrescentad|inserid)|"
                      r"acrescent(?:e|em)-se|insira(?:m)?-se)", re.I)


def _announces_insertion(words: Sequence[str], art_at: int, i: int) -> bool:
    """Does the artigo starting at ``art_at`` announce, in the clause that ends with the colon before word
    ``i``, text it inserts into another act ("passa a vigorar acrescido do seguinte ...:", "passam a
    vigorar com a seguinte redação:", "fica acrescido o seguinte parágrafo:")?"""
    lo = max(art_at, i - 60)
    for j in range(i - 2, lo - 1, -1):  # the clause: back to the previous full stop or semicolon
        if words[j][-1:] in ".;" and words[j].lower() not in _ABBREV:
            lo = j + 1
            break
    return bool(_INSERTS.search(" ".join(words[lo:i])))


def _insertion_end(words: Sequence[str], starts: Sequence[int], i: int, next_art: int) -> int | None:
    """Where text inserted from word ``i`` ends: after its closing quote (and a ``(NR)``), after a
    ``(NR)``, or at the line where the amending act's next artigo (``next_art``) starts; None if none."""
    if words[i][0] in _OPEN_Q:
        return _quote_end(words, starts, i, next_art)
    for j in range(i, len(words)):
        w = words[j]
        if j > i and starts[j] and _next_artigo_at(words, j, next_art):
            return j
        if w.startswith("(NR)"):
            return j + 1
        if w[-1] in "”\x94»" or (len(w) > 1 and w[-2] in "”\x94»" and w[-1] in ".;"):
            return j + 2 if j + 1 < len(words) and words[j + 1].startswith("(NR)") else j + 1
    return None


def _after_stub(words: Sequence[str], last_end: int, i: int) -> bool:
    """Is the text between the last marker (ending at ``last_end``) and word ``i`` a stub annotation
    alone, ``(VETADO).``, ``(Revogado pela Lei nº ...)``? Then the next dispositivo may follow on its line."""
    if last_end >= 0 and words[last_end] in _DASHES:  # "I - (VETADO);": the inciso's dash
        last_end += 1
    if last_end < 0 or not 0 < i - last_end <= 30 or not words[last_end].startswith("("):
        return False
    tail = words[i - 1]
    if not tail.rstrip(".;").endswith(")"):
        return False
    return bool(_ANNOTATION.match(words[last_end])) or words[last_end].lower().startswith("(vetad")


_PARA = re.compile(r"^(\d{1,3})\.$")


def _transcribed_from(words: Sequence[str], starts: Sequence[int]) -> tuple[int, int] | None:
    """``(start, end)`` word range in which artigos are transcriptions, or None.

    A voto, nota técnica or parecer is cut into numbered paragraphs (``1.``, ``2.``, ... ``22.``), and it
    quotes the articles it discusses. When the document's numbered paragraphs start before its first
    artigo and go on after it (an increasing run of at least five, steps of 1 to 3, the first numbered 1
    to 3), its artigos are quotes: from the first paragraph on (up to an ANEXO after the last paragraph)
    no artigo, parágrafo, inciso or alínea is the document's own. Returns the first and the last
    paragraph's word index."""
    n = len(words)
    paras = [(j, int(w[:-1])) for j, w in enumerate(words)
             if len(w) <= 4 and w[-1] == "." and w[:-1].isdigit() and j + 1 < n and words[j + 1][:1].isupper()
             and (starts[j] or (j > 0 and words[j - 1][-1:] in ".:;)"))]
    if len(paras) < 5:
        return None
    first_art = next((j for j, w in enumerate(words) if starts[j] and w[:3] in ("Art", "ART") and _ART.match(w)),
                     None)
    if first_art is None:
        return None
    best: list[tuple[int, int]] = []
    run: list[tuple[int, int]] = []
    for pos, num in paras:
        if run and 1 <= num - run[-1][1] <= 3:
            run.append((pos, num))
        elif num <= 3:
            run = [(pos, num)]
        else:
            continue
        if len(run) > len(best):
            best = list(run)
    if len(best) < 5 or best[0][0] > first_art or best[-1][0] < first_art:
        return None
    return best[0][0], best[-1][0]


def _match(words: Sequence[str], i: int, w: str, frame: _Frame
           ) -> tuple[str, int, object, str, int, object] | None:
    """Shape test of a candidate at word ``i`` (``w`` without its opening quote):
    ``(kind, level, sequence key, label, next word index, key of its last number)`` or None (the last
    key differs from the key for ``Arts. 28 e 29``, ``§§ 3º e 4º``)."""
    n = len(words)
    m = _ART.match(w) or (w == "rt." and _RT.match(w))  # "rt. 758.": the A lost (accepted only in sequence)
    if m:
        num = _parse_number(words, i + 1, m.group(1))
        if num is None or not _text_goes_on(words, num[2]):
            return None
        return "art", 1, num[0], f"art. {num[1]}", num[2], num[0]
    if w in ("Arts.", "ARTS.", "Arts", "ARTS"):  # "Arts. 28 e 29 (Revogados pela Lei ...)"
        nums = [_parse_number(words, i + 1, None)]
        if nums[0] is None:
            return None
        j = nums[0][2]
        label = f"arts. {nums[0][1]}"
        while j + 1 < n and words[j] in ("e", "a"):
            nx = _parse_number(words, j + 1, None)
            if nx is None:
                break
            nums.append(nx)
            label += f" {words[j]} {nx[1]}"
            j = nx[2]
        if len(nums) < 2 or not _text_goes_on(words, j):
            return None
        return "art", 1, nums[0][0], label, j, nums[-1][0]
    if w[0] == "§":
        plural = w.startswith("§§")
        rest = w[2:] if plural else w[1:]
        num = _parse_number(words, i + 1, rest or None)
        if num is None:
            return None
        j = num[2]
        if plural:  # "§§ 3º e 4º (Revogados)."
            while j < n and (words[j] in ("e", "a", ",") or _NUM.match(words[j].rstrip(","))):
                j += 1
        if not _text_goes_on(words, j):
            return None
        return "par", 2, num[0], f"§§ {num[1]}" if plural else f"§ {num[1]}", j, num[0]
    if w in ("Parágrafo", "PARÁGRAFO", "Paragrafo", "PARAGRAFO"):
        if i + 1 < n and words[i + 1].rstrip(".:-–") in _UNICO and _text_goes_on(words, i + 2):
            return "par", 2, (10_000, ""), "parágrafo único", i + 2, (10_000, "")
        return None
    if w in _HEADINGS:
        if i + 1 < n:
            num = words[i + 1].rstrip(".:-–")
            base, _, letter = num.partition("-")  # "CAPÍTULO II-A", inserted between II and III
            if ((_roman(base) and (not letter or re.fullmatch(r"[A-Z]", letter)) or num in _UNICO)
                    and _text_goes_on(words, i + 2)):
                return "heading", 0, None, f"{_HEADINGS[w]} {num}", i + 2, None
        return None
    if w in _ANNEX:
        j = i + 1
        label = "anexo"
        if j < n:
            num = words[j].rstrip(".:-–")
            if _roman(num) or re.fullmatch(r"[A-Z]|\d{1,3}", num) or num in _UNICO:
                label, j = f"anexo {num}", j + 1
        if j < n and not _text_goes_on(words, j):
            return None
        return "annex", 0, None, label, j, None
    if frame.art is None:
        return None  # §, incisos, alíneas and itens live inside an artigo
    m = _INCISO.match(w)  # inciso: roman numeral and a dash, glued or in the next word
    suffix = _INCISO_SUFFIX.match(m.group(3)) if m and m.group(2) == "-" else None
    if suffix and (suffix.group(2) or (i + 1 < n and words[i + 1][0] in _DASHES)):  # "V-A –": inserted after V
        val = _roman(m.group(1))
        if val is not None:
            key = (val, suffix.group(1))
            return "inc", 3, key, f"{m.group(1)}-{suffix.group(1)}", i + 1, key
    if m and (m.group(2) or (not m.group(3) and i + 1 < n and words[i + 1][0] in _DASHES)):
        val = _roman(m.group(1))
        if val is not None:
            return "inc", 3, (val, ""), m.group(1), i + 1, (val, "")
    m = _ALINEA.match(w)
    if m:
        return "ali", 4, m.group(1), m.group(1), i + 1, m.group(1)
    if frame.ali is not None:
        m = _ITEM.match(w)
        if m:
            return "item", 5, int(m.group(1)), m.group(1), i + 1, int(m.group(1))
    return None


def _plausible(frame: _Frame, kind: str, key: object) -> bool:
    """Rule 4: the number follows the previous one of its level."""
    if kind == "art":
        return frame.art is None or key > frame.art  # type: ignore[operator]
    if frame.art is None:
        return False
    if kind == "par":  # a parágrafo único renumbered § 1 when a § 2 came (a compilation prints both)
        renumbered = frame.par == (10_000, "") and key == (1, "")
        return frame.par is None or key > frame.par or renumbered  # type: ignore[operator]
    if kind == "inc":
        return frame.inc is None or key > frame.inc  # type: ignore[operator]
    if kind == "ali":
        return frame.ali is None or key > frame.ali  # type: ignore[operator]
    if kind == "item":
        return frame.item is None or key > frame.item  # type: ignore[operator]
    return True


def _same_number(frame: _Frame, kind: str, key: object) -> bool:
    """The number of the current dispositivo of its level, again (a compilation's new wording)."""
    return frame.art is not None and key is not None and key == {
        "art": frame.art, "par": frame.par, "inc": frame.inc, "ali": frame.ali, "item": frame.item}.get(kind)


def _new_wording(words: Sequence[str], starts: Sequence[int], j: int, span: int = 150) -> bool:
    """Does the unit starting at word ``j`` carry ``(Redação dada ...)`` before the next line-start marker?
    Then it is the new wording of the provision just before it, printed under the same number."""
    for k in range(j, min(len(words), j + span)):
        w = words[k]
        if k > j and starts[k] and (w.startswith(("Art", "§", "Parágrafo")) or _ALINEA.match(w)
                                    or (_INCISO.match(w) and k + 1 < len(words) and words[k + 1][:1] in _DASHES)):
            return False
        if w.lstrip("([").lower().startswith("redação") and k + 1 < len(words) and words[k + 1] == "dada":
            return True
    return False


def _is_sequel(frame: _Frame, kind: str, key: object) -> bool:
    """The very next number of its level (art. 1 first, then n + 1; § 1 first in an artigo, then n + 1)."""
    n, letter = key  # type: ignore[misc]
    if letter:
        return False
    if kind == "art":
        return n == (1 if frame.art is None else frame.art[0] + 1)
    return frame.art is not None and n == (1 if frame.par is None else frame.par[0] + 1)


def _advance(frame: _Frame, kind: str, key: object, label: str) -> None:
    """Record an accepted dispositivo in its frame (lower levels restart)."""
    if kind == "art":
        frame.art, frame.art_label = key, label  # type: ignore[assignment]
        frame.par = frame.par_label = frame.inc = frame.inc_label = frame.ali = frame.item = None
    elif kind == "par":
        frame.par, frame.par_label = key, label  # type: ignore[assignment]
        frame.inc = frame.inc_label = frame.ali = frame.item = None
    elif kind == "inc":
        frame.inc, frame.inc_label = key, label  # type: ignore[assignment]
        frame.ali = frame.item = None
    elif kind == "ali":
        frame.ali, frame.item = key, None  # type: ignore[assignment]
    elif kind == "item":
        frame.item = key  # type: ignore[assignment]
