"""What the lesson says and shows, renderer-neutral: the introduction and the 20 sections as
blocks (:mod:`~attnlab.content.blocks`, :mod:`~attnlab.content.sections` and ``sections_*``), the
knowledge checks and glossary (:mod:`~attnlab.content.knowledge`), the copyable listings
(:mod:`~attnlab.content.listings`), stage explanations and labelled stage tables
(:mod:`~attnlab.content.explain`, :mod:`~attnlab.content.stageview`, :mod:`~attnlab.content.trace`),
the lesson as one JSON document (:mod:`~attnlab.content.document`), the search documents
(:mod:`~attnlab.content.search`) and the blocks as plain terminal text
(:mod:`~attnlab.content.plain`, which the lesson scripts print).

May import: core, text, inputs, lesson, mistakes, grading (a check's answer rule), progress (the
search index table only). Front ends render it as HTML or Markdown; plain text, which needs no
front end, is rendered here.
"""
