"""Roman numerals: the writer and the reader agree on every numeral, and the writer's form is the canonical one."""
from __future__ import annotations

import re

import pytest

from ragcov_data.legal.roman import roman_numeral, roman_value

_CANONICAL = re.compile(r"M{0,3}(CM|CD|D?C{0,3})(XC|XL|L?X{0,3})(IX|IV|V?I{0,3})")


def test_every_numeral_is_canonical_and_reads_back():
    for n in range(1, 4000):
        s = roman_numeral(n)
        assert _CANONICAL.fullmatch(s), (n, s)
        assert roman_value(s) == n


@pytest.mark.parametrize("n, s", [(1, "I"), (4, "IV"), (9, "IX"), (14, "XIV"), (40, "XL"), (90, "XC"), (400, "CD"),
                                  (1994, "MCMXCIV"), (3999, "MMMCMXCIX")])
def test_known_numerals(n, s):
    assert roman_numeral(n) == s


@pytest.mark.parametrize("n", [0, -1, 4000])
def test_out_of_range_is_refused(n):
    with pytest.raises(ValueError, match="no Roman numeral"):
        roman_numeral(n)
