"""The learner's saved progress, one SQLite file shared by every front end, or a PostgreSQL
server (:mod:`~attnlab.progress.backend`, :mod:`~attnlab.progress.pg`): opening and migrating
it (:mod:`~attnlab.progress.db`, :mod:`~attnlab.progress.access`), where it lives
(:mod:`~attnlab.progress.location`), answers, completions and transactions
(:mod:`~attnlab.progress.store`), notes and bookmarks (:mod:`~attnlab.progress.notes`), the
search index table (:mod:`~attnlab.progress.search_index`), the rules of every row and the
export format (:mod:`~attnlab.progress.exchange`), export files
(:mod:`~attnlab.progress.exchange_files`), the resume rule (:mod:`~attnlab.progress.summary`),
what a page shows of a learner in one statement (:mod:`~attnlab.progress.state`),
why a store cannot be used (:mod:`~attnlab.progress.store_errors`), and classes: their learners
and links (:mod:`~attnlab.progress.classes`), sessions and the teacher key
(:mod:`~attnlab.progress.sessions`) and a profile or a whole class as one file
(:mod:`~attnlab.progress.class_exchange`).

May import: core (the section ids of the example), text and inputs; never the lesson's content.
"""
