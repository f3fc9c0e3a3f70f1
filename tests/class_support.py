"""Class fixtures the class tests share: a class with invited learners, and a learner's client
that joined through its link."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from attnlab.mistakes import diagnosis
from attnlab.progress.store import ProgressStore

#: A graded exercise on a stage number, where the catalogue names a wrong answer's mistake.
EXERCISE = "4c"


def no_scale_answer() -> str:
    """The answer to :data:`EXERCISE` of a learner who forgot to divide by sqrt(d_k)."""
    return f"{diagnosis.mistake_stages('no_scale')['scaled_scores'][0, 0, 0]:.3f}"


def make_class(data_dir: Path, names: list[str]) -> tuple[int, str, list[str]]:
    """A new class in ``data_dir``: its id, teacher key and one ``/join/TOKEN`` per name."""
    with ProgressStore.open(data_dir) as store:
        made = store.create_class("week 7")
        links = [f"/join/{i.token}" for i in store.invite(made.id, names)]
    return made.id, made.teacher_key, links


def joined(factory: Any, data_dir: Path, link: str, **kwargs: Any) -> Any:
    """A test client (its own cookies) that opened ``link`` and pressed its button (the GET
    alone joins nothing); the join must succeed."""
    from web_support import post_form

    client = factory(data_dir, **kwargs)
    page = client.get(link, follow_redirects=False)
    assert page.status_code == 200 and f'action="{link}?' in page.text, page.text[:300]
    r = post_form(client, link)
    assert r.status_code == 303 and r.headers["location"].startswith("/lesson"), r.text[:300]
    assert "attnlab_learner" in client.cookies, "joining sets the learner cookie"
    return client
