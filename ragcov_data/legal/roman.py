"""Roman numerals as legal text writes them (incisos, capítulos, títulos): one reader for the citation parser and
the dispositivo parser, and one writer for citations that number incisos in Arabic (LexML URNs)."""
from __future__ import annotations

_VALUE = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}


def roman_value(s: str) -> int:
    """The value of an upper-case Roman numeral (subtractive pairs read as usual: ``"XIV"`` -> 14). The caller
    checks the numeral's form; a letter outside I, V, X, L, C, D, M raises ``KeyError``."""
    total = 0
    for a, b in zip(s, s[1:] + " "):
        v = _VALUE[a]
        total += -v if b != " " and _VALUE[b] > v else v
    return total


_NUMERALS = ((1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"), (40, "XL"),
             (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"))


def roman_numeral(n: int) -> str:
    """The upper-case Roman numeral of ``1 <= n <= 3999`` (``14`` -> ``"XIV"``); :func:`roman_value` reads it
    back."""
    if not 1 <= n <= 3999:
        raise ValueError(f"{n} has no Roman numeral (1 to 3999)")
    out = []
    for value, sym in _NUMERALS:
        k, n = divmod(n, value)
        out.append(sym * k)
    return "".join(out)
