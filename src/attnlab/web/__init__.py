"""The local web lesson served by ``attnlab serve``: 20 sections, an explorer, checks, progress.

A thin front end (STYLE.md point 7): the routes validate input and render templates; every
number on a page is read from :mod:`attnlab.lesson.numbers`, the one source of lesson numbers,
when the page is built.

Modules:

* :mod:`attnlab.web.app`: :func:`create_app`, the FastAPI application factory.
* :mod:`attnlab.web.security`: body-size cap, trusted hosts, cross-site request protection.
* :mod:`attnlab.web.compression`: gzip by ISA-L; :mod:`attnlab.web.fragments`: each section's
  HTML kept per learner state.
* :mod:`attnlab.web.blocks`: HTML for the content blocks of :mod:`attnlab.content` (MathML
  formulas, highlighted code); the sections themselves are built in :mod:`attnlab.content`.
* :mod:`attnlab.web.explorer`: the explorer's presets, size caps and computation.
* :mod:`attnlab.web.routes_*`: the HTTP routes.

May import: every package below the front ends (core, text, inputs, lesson, mistakes,
progress, content, grading, audit (for "Check my code"), figures); never cli or notebook.
"""
