"""The teacher's report of a class: where each learner is and where the class goes wrong.

:func:`build` computes it once, as data, from what the store holds
(:meth:`attnlab.progress.classes.ClassesMixin.class_data`); ``attnlab class report`` and the
``/teacher`` page only word it (:func:`verdict_line`, :func:`mistake_title`, :func:`text`).

* per learner: the sections completed and each exercise's last verdict (its kind and the
  catalogued mistakes behind it);
* per exercise: how many learners' last answer is right and wrong, and the catalogued mistakes
  ranked by how many learners made them there, each with the section that teaches it;
* per section: who is stuck: their last answer to one of its exercises is wrong, or they have
  not completed it while they completed a later one.

* practice (``attnlab practice`` and the web's dealt exercises, fresh numbers each time): per
  learner and section, the answers, the right ones, the current run and whether it is mastered,
  and every catalogued mistake made; per section, how many practised and mastered it, and the
  mistakes ranked. They stay apart from the lesson's exercises above.

Example::

    >>> data = {"class": 1, "name": "week 7", "learners": [
    ...     {"name": "Ada", "profile": "c1-1", "completed": [0, 1], "attempts": []}]}
    >>> build(data)["learners"][0]["completed"]
    [0, 1]
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from typing import Any

from attnlab.content import knowledge
from attnlab.core.example import SECTION_IDS
from attnlab.grading import practice, reasons
from attnlab.mistakes import catalogue
from attnlab.text.i18n import pick

_LESSON_EXERCISES = frozenset(knowledge.exercise_ids())


def _last_verdicts(attempts: list[tuple[Any, ...]]) -> dict[str, dict[str, Any]]:
    """Per exercise, the last graded attempt as data; and every mistake ever made there."""
    last: dict[str, dict[str, Any]] = {}
    for exercise, answer, correct, diagnosis, at in attempts:  # oldest first
        if exercise not in _LESSON_EXERCISES or correct is None:
            continue
        data = reasons.loads(diagnosis, exercise, answer)
        ever = last.get(exercise, {}).get("ever", [])
        names = [str(n) for n in data.get("mistakes", [])]
        last[exercise] = {"answer": answer, "correct": bool(correct), "kind": data["kind"],
                          "mistakes": names, "data": data, "at": at,
                          "ever": ever + [n for n in names if n not in ever]}  # fmt: skip
    return last


def _practice(attempts: list[tuple[Any, ...]]) -> dict[int, dict[str, Any]]:
    """Per practised section: answers, right ones, current run, mastered, mistakes ever made."""
    tried = [{"exercise": e, "answer": a, "correct": c, "diagnosis": d, "at": at}
             for e, a, c, d, at in attempts if str(e).startswith("practice-")]  # fmt: skip
    found = {}
    for sid, (run, done) in practice.mastery(tried).items():
        mine = [a for a in tried if a["exercise"] == practice.attempt_id(sid)]
        ever: list[str] = []
        for a in mine:
            ever += [str(n) for n in practice.stored_data(a).get("mistakes", []) if n not in ever]
        found[sid] = {"answers": sum(a["correct"] is not None for a in mine),
                      "right": sum(bool(a["correct"]) for a in mine), "run": run,
                      "mastered": done, "mistakes": ever}  # fmt: skip
    return found


def _practice_by_section(learners: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    found = {}
    for sid in practice.SECTIONS:
        mine = [p["practice"][sid] for p in learners if sid in p["practice"]]
        if not mine:
            continue
        made = Counter(n for m in mine for n in m["mistakes"])
        ranked = sorted(made.items(), key=lambda kv: (-kv[1], kv[0]))
        found[sid] = {"learners": len(mine), "mastered": sum(m["mastered"] for m in mine),
                      "mistakes": [{"mistake": name, "learners": n, "section": _teaches(name)}
                                   for name, n in ranked]}  # fmt: skip
    return found


def build(data: dict[str, Any]) -> dict[str, Any]:
    """The report (see the module docstring) of one class's data."""
    learners, per_exercise = [], {}
    made: dict[str, Counter[str]] = {}
    for person in data["learners"]:
        last = _last_verdicts(person["attempts"])
        learners.append({"name": person["name"], "profile": person["profile"],
                         "completed": list(person["completed"]), "exercises": last,
                         "practice": _practice(person["attempts"])})  # fmt: skip
        for eid, verdict in last.items():
            made.setdefault(eid, Counter()).update(verdict["ever"])
    for eid in knowledge.exercise_ids():
        verdicts = [p["exercises"][eid] for p in learners if eid in p["exercises"]]
        ranked = sorted(made.get(eid, Counter()).items(), key=lambda kv: (-kv[1], kv[0]))
        per_exercise[eid] = {
            "section": knowledge.exercise(eid, "en").section,
            "right": sum(v["correct"] for v in verdicts),
            "wrong": sum(not v["correct"] for v in verdicts),
            "mistakes": [{"mistake": name, "learners": n, "section": _teaches(name)}
                         for name, n in ranked],
        }  # fmt: skip
    stuck = {sid: _stuck(sid, learners) for sid in SECTION_IDS}
    return {"class": data["class"], "name": data["name"], "size": len(learners),
            "learners": learners, "exercises": per_exercise, "stuck": stuck,
            "practice": _practice_by_section(learners)}  # fmt: skip


def _teaches(name: str) -> int | None:
    try:
        return catalogue.get(name).section
    except KeyError:  # a mistake since renamed: counted, not linked
        return None


def _stuck(sid: int, learners: list[dict[str, Any]]) -> list[str]:
    ids = [e.id for e in knowledge.section(sid).exercises]
    later = [s for s in SECTION_IDS if SECTION_IDS.index(s) > SECTION_IDS.index(sid)]
    names = []
    for p in learners:
        wrong = any(e in p["exercises"] and not p["exercises"][e]["correct"] for e in ids)
        skipped = sid not in p["completed"] and any(s in p["completed"] for s in later)
        if wrong or skipped:
            names.append(p["name"])
    return names


def verdict_line(exercise: str, verdict: dict[str, Any], lang: str) -> str:
    """A learner's last verdict on ``exercise`` in ``lang`` (as the lesson words it)."""
    return reasons.present(exercise, verdict["answer"], verdict["data"], lang)


def mistake_title(name: str, lang: str) -> str:
    """The catalogued mistake ``name`` in ``lang`` (its name if the catalogue lost it)."""
    try:
        return catalogue.get(name).title[lang]
    except KeyError:
        return name


def as_json(report: dict[str, Any]) -> dict[str, Any]:
    """The report as JSON data (the verdict data kept, the per-attempt history left out)."""
    people = [{**p, "exercises": {e: {k: v[k] for k in ("answer", "correct", "kind", "mistakes")}
                                  for e, v in p["exercises"].items()},
               "practice": {str(s): v for s, v in p["practice"].items()}}
              for p in report["learners"]]  # fmt: skip
    stuck = {str(s): names for s, names in report["stuck"].items()}
    drill = {str(s): v for s, v in report["practice"].items()}
    return {**report, "learners": people, "stuck": stuck, "practice": drill}


def text(report: dict[str, Any], lang: str) -> str:
    """The report as lines of text in ``lang``."""
    n = report["size"]
    lines = [pick(lang, f"班级 {report['class']}「{report['name']}」：{n} 位学员",
                  f"Class {report['class']} ({report['name']}): {n} learners")]  # fmt: skip
    lines.append(pick(lang, "学员：", "Learners:"))
    for p in report["learners"]:
        done = ", ".join(map(str, p["completed"])) or "-"
        lines.append(f"  {p['name']} ({p['profile']}): " +
                     pick(lang, f"已完成 {len(p['completed'])} 节 [{done}]",
                          f"{len(p['completed'])} sections completed [{done}]"))  # fmt: skip
        for eid, v in p["exercises"].items():
            lines.append(f"    {eid}: {verdict_line(eid, v, lang)}")
    lines.append(pick(lang, "练习：", "Exercises:"))
    for eid, e in report["exercises"].items():
        if not e["right"] and not e["wrong"]:
            continue
        lines.append(f"  {eid}: " + pick(lang, f"{e['right']} 对，{e['wrong']} 错",
                                          f"{e['right']} right, {e['wrong']} wrong"))  # fmt: skip
        for m in e["mistakes"]:
            where = (
                ""
                if m["section"] is None
                else pick(lang, f"（见第 {m['section']} 节）", f" (see section {m['section']})")
            )
            title = mistake_title(m["mistake"], lang)
            lines.append("    " + pick(lang, f"{n} 人中有 {m['learners']} 人：{title}{where}",
                                       f"{m['learners']} of {n}: {title}{where}"))  # fmt: skip
    lines.append(pick(lang, "卡住的学员（按节）：", "Stuck (by section):"))
    for sid, names in report["stuck"].items():
        if names:
            lines.append(f"  {sid}: " + ", ".join(names))
    if report["practice"]:
        heading = pick(lang, "新数字练习（按节）：", "Practice with fresh numbers (by section):")
        lines.append(heading)
    for sid, d in report["practice"].items():
        k, m = d["learners"], d["mastered"]
        counts = pick(lang, f"{k} 人练习，{m} 人已掌握", f"{k} practised, {m} mastered")
        lines.append(f"  {sid}: {counts}")
        for made in d["mistakes"]:
            title = mistake_title(made["mistake"], lang)
            lines.append("    " + pick(lang, f"{n} 人中有 {made['learners']} 人：{title}",
                                       f"{made['learners']} of {n}: {title}"))  # fmt: skip
    return "\n".join(lines)


def as_csv(report: dict[str, Any]) -> str:
    """One row per learner and exercise answered: learner, profile, sections completed,
    exercise, right (1/0), verdict kind, mistakes (``;``-separated names); and one per section
    practised with fresh numbers: exercise ``practice-N``, right = mastered (1/0), kind
    ``practice``, every mistake made there.

    A name a learner or teacher typed that a spreadsheet would run as a formula (starting with
    ``=``, ``+``, ``-`` or ``@``) is written with a leading ``'``, which spreadsheets show as
    text (OWASP's advice against CSV injection)."""
    out = io.StringIO()
    rows = csv.writer(out, lineterminator="\n")
    rows.writerow(["learner", "profile", "completed", "exercise", "right", "kind", "mistakes"])
    for p in report["learners"]:
        who, done = [_as_text(p["name"]), _as_text(p["profile"])], len(p["completed"])
        for eid, v in p["exercises"].items():
            rows.writerow([*who, done, eid, int(v["correct"]), v["kind"], ";".join(v["mistakes"])])
        for sid, d in p["practice"].items():
            rows.writerow([*who, done, practice.attempt_id(sid), int(d["mastered"]), "practice",
                           ";".join(d["mistakes"])])  # fmt: skip
        if not p["exercises"] and not p["practice"]:
            rows.writerow([*who, done, "", "", "", ""])
    return out.getvalue()


def _as_text(typed: str) -> str:
    return "'" + typed if typed[:1] in ("=", "+", "-", "@") else typed
