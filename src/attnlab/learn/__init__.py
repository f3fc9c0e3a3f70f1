"""The learner's side: knowledge checks (:mod:`~attnlab.learn.knowledge`), the one grader of typed
answers (:mod:`~attnlab.learn.grading`, reading numbers with :mod:`~attnlab.learn.answer_parse`;
``check``'s stage answers in :mod:`~attnlab.learn.handcheck`), the quiz and the progress store
shared by the terminal and the web (:mod:`~attnlab.learn.store`)."""
