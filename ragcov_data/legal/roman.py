"""Roman numerals as legal text writes them (incisos, capítulos, títulos): one reader for the citation parser and
the dispositivo parser."""
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
