"""Words and files a person reads: language selection (:mod:`~attnlab.text.i18n`), the one-line
bilingual errors (:mod:`~attnlab.text.errors`), the one number formatter and its tables
(:mod:`~attnlab.text.fmt`) and the one atomic file write (:mod:`~attnlab.text.atomic`).

May import: nothing else of attnlab, and no torch at import time (the scripts parse their
arguments with this package before torch loads).
"""
