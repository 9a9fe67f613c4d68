"""Dispositivo markers, headings and the citation chain parser (part of :mod:`ragcov_data.legal.citations`)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

from ragcov_data.legal.roman import roman_value

# --------------------------------------------------------------------------- dispositivo markers

_NUM = r"(?:\d{1,3}(?:\.\d{3}){1,2}|\d{1,4})(?![\d.]?\d)"  # a heading's number, never cut from a longer one
_ORD = r"(?:\s?[º°ª](?![a-zA-Z])|o(?![a-zA-Z])|\.[º°])?"
_SUF = r"(?:[-–](?P<suf>[A-Z])(?![a-zA-Z]))?"
#: A number of a citation: any length (``art. 99999`` is read whole, then rejected by range, never cut).
_ARAB = re.compile(r"(?P<n>\d{1,3}(?:\.\d{3})+(?!\d)|\d+)" + _ORD + _SUF)
_ROMAN = re.compile(r"(?P<r>[IVXLC]{1,7})(?:[-–](?P<rsuf>[A-Z]))?(?![a-zA-Z0-9])")
#: A token written where an inciso's Roman numeral belongs that is not one (``IIII``, ``VV``, ``0``, ``5``): read,
#: so the chain goes on to its act, and refused with ``invalid_numeral``. Upper case (lower case only ``i``/``v``/``x``:
#: ``inciso civil`` is a word).
_BAD_ROMAN = re.compile(r"(?P<r>[IVXLCDM]+|[ivx]+|\d+)(?:[-–](?P<rsuf>[A-Z]))?(?![a-zA-Z0-9])")
#: After a list separator only a token of I, V and X is a bad numeral (``incisos I e IIII``); ``CC``, ``LC`` are acts.
_BAD_ROMAN_NEXT = re.compile(r"(?P<r>[IVX]+)(?:[-–](?P<rsuf>[A-Z]))?(?![a-zA-Z0-9])")
#: A number written where an alínea's letter belongs (``alínea 1``): read, and refused with ``invalid_numeral``.
_BAD_LETTER = re.compile(r"(?P<b>\d+)(?![a-zA-Z0-9º°])")
_ROMAN_OK = re.compile(r"^(?=[IVXLC])(XC|XL|L?X{0,3})(IX|IV|V?I{0,3})$|^C{1,3}(XC|XL|L?X{0,3})(IX|IV|V?I{0,3})$")
_LETTER = re.compile(r"[“\"‘'«]\s*(?P<q>[a-zA-Z])\s*(?:[”\"’'»]|(?=[,;.\s)]))|(?P<b>[a-z])(?:\)|(?=[\s,;.]|$))")
#: After an explicit ``alínea`` marker an unquoted capital letter is a value too (``ALÍNEA B``).
_LETTER_AFTER_MARKER = re.compile(_LETTER.pattern + r"|(?P<u>[A-Z])(?:\)|(?=[\s,;.]|$))")
_QLETTER = re.compile(r"[“\"‘'«]\s*(?P<q>[a-zA-Z])\s*(?:[”\"’'»]|(?=[,;.\s)]))")

#: Any dispositivo marker: where a chain of a citation may start.
MARKER_RE = re.compile(
    r"(?P<art>\b(?:arts?\.?|artigos?)(?=\s*\d))"
    r"|(?P<par>§§?)"
    r"|(?P<uni>\bpar[áa]?grafo\s+[úu]?nico\b)"  # an accent lost in decoding (U+FFFD, removed) still reads
    r"|(?P<pars>\bpar[áa]?grafos?(?=\s+\d))"
    r"|(?P<inc>\b(?:incisos?|inc\.)(?=\s+(?-i:[IVXLCDM]|[ivxlc]+\b|\d)))"
    r"|(?P<ali>\bal[íi]?neas?\b)"
    r"|(?P<item>\b(?:itens|item)(?=\s+\d))"
    r"|(?P<caput>\bcaput\b)"
    r"|(?P<anx>\banexos?(?=\s+(?:(?-i:[IVXLC]+)\b|\d|[úu]nico\b)))",
    re.I,
)
#: Levels of a chain: the annex above the artigo, then artigo, parágrafo (or caput), inciso, alínea, item.
_LEVEL = {"anx": 0, "art": 1, "par": 2, "uni": 2, "pars": 2, "caput": 2, "inc": 3, "ali": 4, "item": 5}
_WS = re.compile(r"\s*")
_LIST_SEP = re.compile(r"\s*(?:,\s*(?:e|ou)\s+|,\s*|\s+e/ou\s+|\s+e\s+|\s+ou\s+)", re.I)
#: A range: "2º a 4º", "art. 2º ao art. 4º", "§ 2º ao § 6º", "inciso I ao inciso V".
_RANGE_SEP = re.compile(r"\s+(?:a|até|ao)\s+(?:(?:o\s+)?(?:art\.|artigo|§|inciso|al[íi]nea)\s*)?", re.I)
_DOWN = re.compile(r"\s*,?\s*(?:d[oa]s?|n[oa]s?|de\s+(?:seu|sua)s?)\s+(?:mesmo\s+|referido\s+)?", re.I)
_UNICO = re.compile(r"\s*[úu]?nico\b", re.I)
_COMMA = re.compile(r"\s*,\s*")
_LOWER_ROMAN = re.compile(r"\s*(?P<r>[ivxlc]{1,7})(?![a-zA-Z0-9])")
_BARE_CAPUT = re.compile(r"[ \t]+(?=caput\b|§)", re.I)  # "art. 1º caput, incisos IV a VIII", "Art. 16 § 1º"
_AND_ITS = re.compile(r"\s*,?\s*e\s+(?:seus?|suas?|respectiv[oa]s?)\s+", re.I)  # "artigo 150 e seus §§ 1º e 4º"
_CHAIN_JOIN = re.compile(r"\s*(?:,\s*)?(?:e\s+|ou\s+)?(?:(?:n|d|a)[oa]s?\s+|ao\s+|aos\s+|à\s+|às\s+|[oa]s?\s+)?")
#: A looser join of a chain to the next, whose act it shares: "e" and up to three words, no punctuation
#: ("antes do art. 64 e incluir o arts. 64-A e 64-B na Resolução …"); ", bem como a do" opens a new clause.
_LOOSE_JOIN = re.compile(r"\s+(?:e|ou)\s+(?:[^\W\d]+\s+){0,3}", re.I)
_FORWARD = re.compile(r"\s*,?\s*(?:(?:d[oa]s?|n[oa])\s+(?:referid[oa]\s+|mencionad[oa]\s+|citad[oa]\s+)?"
                      r"|(?=(?:[dn]est[ae]|d[ao]\s+present[e])\s))", re.I)
#: What may stand between an act and a chain that belongs to it: punctuation, or the amending formula
#: ("A Lei nº 9.074 … passa a vigorar acrescida do seguinte art. 4º-E").
_ACT_BEFORE_GAP = re.compile(r"[\s,;–—\-(]*(?::\s*(?-i:[a-z]\)|[IVXLC]+\s*[-–])\s*)?[\s,;:–—\-(]*"  # ": a) art. 7º"
                             r"(?:e\s+|passa(?:m)?\s+a\s+vigorar\s+acrescid[oa]s?\s+d[oa]s?\s+seguintes?\s+)?", re.I)
#: A possessive pointing back to the act just named: "Decreto nº 10.139/2019 em seu art. 8º".
_POSSESSIVE = re.compile(r"\b(?:em|n[oa])\s+s(?:eu|ua)s?\s*$", re.I)
#: A reference to the dispositivo the text sits in (``deste artigo``, ``do mesmo parágrafo``): the level it names.
_SELF_ARTICLE = re.compile(r"\s*,?\s*(?:dest[ae]|do\s+mesmo|da\s+mesma)\s+(?P<lv>artigo|art\.|par[áa]grafo|inciso|al[íi]nea|item)\b",
                           re.I)


def normalize_article(s: str) -> str:
    """``"3º-A"`` -> ``"3-A"``, ``"1.042"`` -> ``"1042"``, ``"12 - A"`` -> ``"12-A"``."""
    m = _ARAB.fullmatch(s.strip())
    if m is None:
        raise ValueError(f"not an article number: {s!r}")
    return m.group("n").replace(".", "") + (f"-{m.group('suf')}" if m.group("suf") else "")


# --------------------------------------------------------------------------- headings


class Heading(NamedTuple):
    """A line that opens a dispositivo: ``kind`` (``art``, ``par``, ``inc``, ``ali``, ``item``), the
    normalised ``number`` (``"3-A"``, ``"único"``, ``"IV"``, ``"b"``), ``numbers`` (``Arts. 28 e 29``)
    and ``end`` (offset in the line after the marker)."""

    kind: str
    number: str
    numbers: tuple[str, ...]
    end: int


_HEAD_ART = re.compile(r"\s*[“\"]?\s*(?:Art(?:igo)?|ART(?:IGO)?|rt)s?\s?\.?\s*(?P<n>" + _NUM + r")" + _ORD + _SUF
                       + r"(?P<more>(?:\s*(?:,|e|a)\s*\d{1,4}(?!\d)" + _ORD + r")*)\s*\.?")
_HEAD_PAR = re.compile(r"\s*[“\"]?\s*§\s*(?P<n>\d{1,3})(?!\d)" + _ORD + _SUF + r"\s*\.?")
_HEAD_PARS = re.compile(r"\s*§§\s*(?P<n>\d{1,3})(?!\d)" + _ORD + r"(?P<more>(?:\s*(?:,|e|a)\s*\d{1,3}(?!\d)" + _ORD + r")+)\s*\.?")
_HEAD_UNI = re.compile(r"\s*[“\"]?\s*(?:Par[áa]grafo|PAR[ÁA]GRAFO)\s+(?:[úu]nico|ÚNICO)\s*[.:\-–—]?")
_HEAD_INC = re.compile(r"\s*[“\"]?\s*(?P<r>[IVXLC]{1,7})(?:\s?-\s?(?P<suf>[A-Z])(?=\s*[-–—]))?\s*[-–—]+")
_HEAD_ALI = re.compile(r"\s*[“\"]?\s*(?P<l>[a-z])(?:-(?P<suf>[A-Z]))?\)")
_HEAD_ITEM = re.compile(r"\s*(?P<n>\d{1,2})(?:[.)]|\s?[-–—])\s")
_GOES_ON = re.compile(r"\s*(?:[A-ZÀ-Ý0-9“\"«(\[–—\-]|\.{3}|…|$)")


def heading_match(line: str) -> Heading | None:
    """The dispositivo a line opens, or None (a citation, or ordinary text).

    ``Art. 7º O imposto`` / ``Art 31.`` / ``rt. 758.`` (a source's lost letter) / ``Arts. 28 e 29
    (Revogados …)`` / ``§ 4o`` / ``Parágrafo único.`` / ``IV -`` / ``IV-A –`` / ``b)`` / ``1.`` open a
    dispositivo. After an artigo or parágrafo marker the text must go on with a capital letter, digit,
    quote, bracket, dash or nothing: ``§ 1º do art. 7º`` and ``Art. 5º da Lei nº …`` are citations.

    Notes
    -----
    Items (``1.``) are reported whatever their context; a caller keeps them only inside an alínea.
    """
    m = _HEAD_ART.match(line)
    if m and not line.lstrip(" “\"").startswith(("art", "artigo")):
        if _GOES_ON.match(line, m.end()):
            first = m.group("n").replace(".", "") + (f"-{m.group('suf')}" if m.group("suf") else "")
            more = tuple(re.findall(r"\d{1,4}", m.group("more") or ""))
            if more and re.search(r"\ba\b", m.group("more")):
                more = tuple(str(k) for k in range(int(first.split("-")[0]) + 1, int(more[-1]) + 1))
            return Heading("art", first, (first,) + more, m.end())
        return None
    m = _HEAD_PARS.match(line)
    if m:
        if _GOES_ON.match(line, m.end()):
            nums = (m.group("n"),) + tuple(re.findall(r"\d{1,3}", m.group("more")))
            return Heading("par", nums[0], nums, m.end())
        return None
    m = _HEAD_PAR.match(line)
    if m:
        if _GOES_ON.match(line, m.end()):
            n = m.group("n") + (f"-{m.group('suf')}" if m.group("suf") else "")
            return Heading("par", n, (n,), m.end())
        return None
    m = _HEAD_UNI.match(line)
    if m:
        if _GOES_ON.match(line, m.end()):
            return Heading("par", "único", ("único",), m.end())
        return None
    m = _HEAD_INC.match(line)
    if m and _ROMAN_OK.match(m.group("r")):
        n = m.group("r") + (f"-{m.group('suf')}" if m.group("suf") else "")
        return Heading("inc", n, (n,), m.end())
    m = _HEAD_ALI.match(line)
    if m:
        n = m.group("l") + (f"-{m.group('suf')}" if m.group("suf") else "")
        return Heading("ali", n, (n,), m.end())
    m = _HEAD_ITEM.match(line)
    if m:
        return Heading("item", m.group("n"), (m.group("n"),), m.end())
    return None


def is_citation(text: str) -> bool:
    """Does ``text`` start with a citation of a dispositivo (not a heading that opens one)?

    True for ``§ 1º do art. 7º``, ``Art. 5º da Lei nº 9.250``, ``art. 3º``, ``inciso II do caput``,
    ``arts. 3º e 4º``; False for ``Art. 7º O imposto …``, ``§ 1º Constituem …``, ``I - os rendimentos``,
    and for text that starts with no dispositivo marker.

    Examples
    --------
    >>> is_citation("§ 1º do art. 7º desta Lei"), is_citation("§ 1º Constituem rendimento bruto")
    (True, False)
    """
    s = text.lstrip(" “\"")
    m = MARKER_RE.match(s)
    if m is None:
        return False
    return heading_match(s) is None


# --------------------------------------------------------------------------- the chain parser


@dataclass
class _Comp:
    level: int
    values: list[tuple[str, bool]]  # (value, from_range)
    plural: bool
    start: int
    end: int
    link: str = "list"  # how it joins the component before it: "list" or "refine"


def _roman_ok(s: str) -> bool:
    return bool(_ROMAN_OK.match(s))


def _arab_value(m: re.Match) -> str:
    return m.group("n").replace(".", "") + (f"-{m.group('suf')}" if m.group("suf") else "")


def _values(text: str, pos: int, kind: str, multi: bool = True,
            marker: bool = False) -> tuple[list[tuple[str, bool]], int]:
    """The value list after a marker of ``kind`` (``arab``, ``roman``, ``letter``) from ``pos``:
    ``([(value, from_range)], end)``; ranges expanded. ``multi=False`` (a singular ``§``, ``inciso``,
    ``alínea``) reads one value or one range. ``marker``: the values follow an explicit marker (``alínea``,
    ``inciso``): unquoted letters of a plural list or range count (``alíneas a a d``), and a token that is
    not a Roman numeral (``inciso IIII``, ``incisos I e VV``) or a letter (``alínea 1``) is read as written, to
    be refused by the caller."""
    out: list[tuple[str, bool]] = []
    rx = {"arab": _ARAB, "roman": _ROMAN, "letter": _LETTER_AFTER_MARKER if marker else _LETTER}[kind]
    p = _WS.match(text, pos).end()
    m = rx.match(text, p)
    if m is None or (kind == "roman" and not _roman_ok(m.group("r"))):
        bad = {"roman": _BAD_ROMAN, "letter": _BAD_LETTER}.get(kind) if marker else None
        bad = bad.match(text, p) if bad is not None else None
        if bad is None:
            return out, pos
        m = bad
    out.append((_val(m, kind), False))
    end = m.end()
    while True:
        r = _RANGE_SEP.match(text, end)
        if r:
            m2 = _next_value(text, r.end(), rx, kind, marker)
            if m2 and _same_list(text, m2, kind, plural=marker and multi):
                out.extend(_expand(out[-1][0], _val(m2, kind), kind))
                end = m2.end()
                continue
        s = _LIST_SEP.match(text, end) if multi else None
        if s:
            m2 = _next_value(text, s.end(), rx, kind, marker)
            if m2 and _same_list(text, m2, kind, plural=marker):
                out.append((_val(m2, kind), False))
                end = m2.end()
                continue
        break
    return out, end


def _next_value(text: str, pos: int, rx: re.Pattern, kind: str, marker: bool) -> re.Match | None:
    """The next value of a list or range at ``pos``: a valid Roman numeral only, unless after an explicit
    ``incisos`` marker, where a token of I, V and X that is not one is read too (and refused later)."""
    m = rx.match(text, pos)
    if kind != "roman" or (m and _roman_ok(m.group("r"))):
        return m
    return _BAD_ROMAN_NEXT.match(text, pos) if marker else None


def _same_list(text: str, m: re.Match, kind: str, plural: bool = False) -> bool:
    """A value after a list separator continues the list unless it opens something else (a year, a
    lower-case word after a single letter; an unquoted letter only after a plural ``alíneas f e g``)."""
    if kind == "letter":
        return m.group("q") is not None or text[m.end():m.end() + 1] == ")" or bool(m.groupdict().get("u")) \
            or (plural and m.group("b") is not None)
    if kind == "arab":
        nxt = text[m.end():m.end() + 12]
        return not re.match(r"\s+de\s+\d", nxt)
    return True


def _val(m: re.Match, kind: str) -> str:
    if kind == "arab":
        return _arab_value(m)
    if kind == "roman":
        return m.group("r") + (f"-{m.group('rsuf')}" if m.group("rsuf") else "")
    g = m.groupdict()
    return (g.get("q") or g["b"] or g.get("u")).lower()


_roman_int = roman_value  # the one reader of Roman numerals (ragcov_data.legal.roman)


def _int_roman(n: int) -> str:
    out = ""
    for v, s in ((100, "C"), (90, "XC"), (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")):
        while n >= v:
            out += s
            n -= v
    return out


def _short(s: str) -> bool:
    """``s`` is a number of at most 6 digits: one ``int()`` may read (a longer one is out of range anyway)."""
    return s.isdigit() and len(s) <= 6


def _expand(a: str, b: str, kind: str) -> list[tuple[str, bool]]:
    """Values after ``a`` up to ``b`` of a range (``a`` already listed): ``[(v, True)]``; a range to a
    lettered artigo (``1º a 47-A``) runs to its number and adds it; one from a lettered artigo (``3º-A a
    3º-C``) keeps its end only."""
    if kind == "arab" and _short(a) and _short(b) and 0 < int(b) - int(a) <= 500:
        return [(str(k), True) for k in range(int(a) + 1, int(b) + 1)]
    head = b.split("-")[0]
    if kind == "arab" and _short(a) and _short(head) and 0 < int(head) - int(a) <= 500:  # "1º a 47-A"
        return [(str(k), True) for k in range(int(a) + 1, int(head) + 1)] + [(b, True)]
    if kind == "roman" and "-" not in a + b and _roman_ok(a) and _roman_ok(b):
        x, y = _roman_int(a), _roman_int(b)
        if 0 < y - x <= 100:
            return [(_int_roman(k), True) for k in range(x + 1, y + 1)]
    if kind == "letter" and len(a) == len(b) == 1 and 0 < ord(b) - ord(a) <= 26:
        return [(chr(k), True) for k in range(ord(a) + 1, ord(b) + 1)]
    return [(b, True)]


def _component(text: str, pos: int, prev: _Comp | None, list_level: int) -> _Comp | None:
    """One component starting at ``pos`` (a marker with its values, or a bare value in a list)."""
    p = _WS.match(text, pos).end()
    m = MARKER_RE.match(text, p)
    if m:
        kind = m.lastgroup
        level = _LEVEL[kind]
        if kind == "caput":
            return _Comp(2, [("caput", False)], False, p, m.end())
        if kind == "uni":
            return _Comp(2, [("único", False)], False, p, m.end())
        u = _UNICO.match(text, m.end())
        if kind in ("par", "anx") and u:  # "§ único", "Anexo Único"
            return _Comp(level, [("único", False)], False, p, u.end())
        low = _LOWER_ROMAN.match(text, m.end()) if kind == "inc" else None
        if low and _roman_ok(low.group("r").upper()):  # "inciso ii" in lower-case text
            return _Comp(3, [(low.group("r").upper(), False)], False, p, low.end())
        if kind == "anx":
            mr = _ROMAN.match(text, _WS.match(text, m.end()).end())
            vk = "roman" if mr and _roman_ok(mr.group("r")) else "arab"
        else:
            vk = {"art": "arab", "par": "arab", "pars": "arab", "inc": "roman", "ali": "letter", "item": "arab"}[kind]
        word = m.group(0).lower().rstrip(".")
        plural = word in ("§§", "arts", "artigos", "parágrafos", "paragrafos", "incisos", "alíneas", "alineas", "itens",
                          "anexos")
        vals, end = _values(text, m.end(), vk, multi=plural or kind == "art", marker=kind in ("ali", "inc"))
        if not vals:
            return None
        return _Comp(level, vals, plural or len(vals) > 1, p, end)
    if prev is None:
        return None
    # a bare value continuing a list: a quoted letter (alínea), a roman numeral (inciso), a number
    if _QLETTER.match(text, p) and prev.level in (3, 4, 5):  # "alíneas “b”, item 10, e “c”"
        vals, end = _values(text, p, "letter")
        return _Comp(4, vals, len(vals) > 1, p, end) if vals else None
    mr = _ROMAN.match(text, p)
    if mr and _roman_ok(mr.group("r")) and prev.level in (1, 2, 3):
        vals, end = _values(text, p, "roman")
        return _Comp(3, vals, len(vals) > 1, p, end)
    ma = _ARAB.match(text, p)
    if ma and not re.match(r"\s+de\s", text[ma.end():ma.end() + 5]):
        if list_level == 1:  # "arts. 53, inciso II, § 4º, 54, 65"
            vals, end = _values(text, p, "arab")
            return _Comp(1, vals, len(vals) > 1, p, end)
        if list_level == 2 and prev.level > 2:  # "§§ 1º, inciso III, e 2º"
            vals, end = _values(text, p, "arab")
            return _Comp(2, vals, len(vals) > 1, p, end)
        if prev.level == 2 and prev.values[-1][0] not in ("caput", "único"):  # "§ 1º e 2º"
            vals, end = _values(text, p, "arab", multi=False)
            return _Comp(2, vals, False, p, end)
    return None


def _chain(text: str, pos: int) -> tuple[list[_Comp], int]:
    """The components of the citation chain starting at ``pos`` and where it ends."""
    comps: list[_Comp] = []
    end = pos
    list_level = 0  # the level of the last plural list of numbers (arts., §§): a bare number continues it
    p = pos
    while True:
        prev = comps[-1] if comps else None
        c = _component(text, p, prev, list_level)
        if c is None:
            break
        if prev is not None and c.level < prev.level and (
                _DOWN.fullmatch(text, end, p)
                or (all(x.level > c.level for x in comps) and _COMMA.fullmatch(text, end, p))):
            c.link = "up"  # running order: "inciso II do art. 8º", "inciso XL, art. 4º, Anexo I"
        elif prev is not None and c.level > prev.level and re.search(r"\be\b", text[end:p]):
            c.link = "and"  # "art. 8º e § 1º": the artigo (its caput) and its paragraph
        comps.append(c)
        end = c.end
        if c.level == 1 and c.plural:
            list_level = 1
        elif c.level == 2 and c.plural and list_level != 1:
            list_level = 2
        # what may follow: a list separator and a component, or "do/da" and a higher-level marker
        nxt = None
        s = _LIST_SEP.match(text, end) or _BARE_CAPUT.match(text, end)
        if s:
            q = _WS.match(text, s.end()).end()
            if MARKER_RE.match(text, q) or _QLETTER.match(text, q) or _ROMAN.match(text, q) or _ARAB.match(text, q):
                nxt = s.end()
        if nxt is None:
            s = _AND_ITS.match(text, end)
            mk = MARKER_RE.match(text, s.end()) if s else None
            if mk and _LEVEL[mk.lastgroup] > c.level:
                nxt = s.end()
        if nxt is None:
            d = _DOWN.match(text, end)
            if d:
                q = _WS.match(text, d.end()).end()
                mk = MARKER_RE.match(text, q)
                if mk and _LEVEL[mk.lastgroup] < c.level:
                    nxt = d.end()
        if nxt is None:
            break
        p = nxt
    return comps, end


def _resolve(comps: list[_Comp]) -> list[dict]:
    """Citations (dicts of levels) of a chain: running-order groups turned around, then list order."""
    seq: list[_Comp] = []
    i = 0
    while i < len(comps):  # group running-order runs: c_i up c_{i+1} up ... -> ascending refinements
        j = i
        while j + 1 < len(comps) and comps[j + 1].link == "up":
            j += 1
        group = comps[i:j + 1][::-1]
        if len(group) > 1:
            for k, c in enumerate(group):
                c.link = "refine" if k else "list"
            # siblings listed before the run share its parents: "nos § 7º, § 8º e § 10 do art. 836"
            head = group[-1]
            while seq and seq[-1].level == head.level and seq[-1].link == "list":
                head.values = seq.pop().values + head.values
        seq.extend(group)
        i = j + 1
    out: list[dict] = []
    cur: dict[int, list[tuple[str, bool]]] = {}
    deepest = -1  # no level yet (the annex is level 0)

    def emit() -> None:
        if deepest < 0:
            return
        base = {lv: cur[lv][-1] for lv in cur if lv < deepest}
        for v in cur[deepest]:
            out.append({**base, deepest: v})

    for c in seq:
        if c.link == "and" and deepest > 0 and c.level > deepest:
            n = len(out)
            emit()  # the text before "e" is cited by itself too: an artigo, as its caput
            if deepest == 1:
                out[n:] = [{**x, 2: ("caput", False)} for x in out[n:]]
        if c.level > deepest:
            if deepest >= 0 and len(cur[deepest]) > 1:  # only the last value of a list is refined
                keep = cur[deepest]
                cur[deepest] = keep[:-1]
                emit()
                cur[deepest] = keep[-1:]
            cur[c.level] = c.values
            deepest = c.level
        else:
            emit()
            for lv in [lv for lv in cur if lv >= c.level]:
                del cur[lv]
            cur[c.level] = c.values
            deepest = c.level
    emit()
    return out
