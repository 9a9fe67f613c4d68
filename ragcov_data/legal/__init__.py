"""Readers of Brazilian legal text: citations, vigência (wording in force) and acervo files of compiled acts."""
