"""The learner's saved progress, one SQLite file shared by every front end, or a PostgreSQL
server (:mod:`~attnlab.progress.backend`, :mod:`~attnlab.progress.pg`): opening and migrating
it (:mod:`~attnlab.progress.db`, :mod:`~attnlab.progress.access`), answers and completions
(:mod:`~attnlab.progress.store`, :mod:`~attnlab.progress.transactions`), notes and bookmarks
(:mod:`~attnlab.progress.notes`), the search index table (:mod:`~attnlab.progress.search_index`),
the export format and its files
(:mod:`~attnlab.progress.exchange`, :mod:`~attnlab.progress.exchange_files`), the resume rule
(:mod:`~attnlab.progress.summary`) and why a store cannot be used
(:mod:`~attnlab.progress.store_errors`).

May import: core (the section ids of the example), text and inputs; never the lesson's content.
"""
