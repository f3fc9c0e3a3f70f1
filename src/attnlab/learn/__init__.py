"""The learner's side: knowledge checks (:mod:`~attnlab.learn.knowledge`), grading of typed
answers (:mod:`~attnlab.learn.grading`, :mod:`~attnlab.learn.handcheck`), the quiz and the
progress store shared by the terminal and the web (:mod:`~attnlab.learn.store`)."""
