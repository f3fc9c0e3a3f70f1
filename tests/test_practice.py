"""``attnlab practice``: dealt exercises are hand-sized, never show their answer, differ by seed,
and the one grader (through ``check --input``, as a learner would use the JSON) calls the right
answer right and the 0-fill and no-÷√d_k answers wrong with the mistake named. The right and
wrong answers here are computed independently of attnlab, with plain torch."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import cast

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from attnlab.cli.main import app
from attnlab.grading import handcheck, practice
from attnlab.grading.answers import parse_numbers
from attnlab.progress.store import ProgressStore
from attnlab.text.errors import InputError

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # 3×3 tensors: no thread pool
#: The sections whose practice asks for numbers (section 9 asks for a shape: tested below).
SECTIONS = sorted(s for s in practice.SECTIONS if s != 9)
SEEDS = range(6)


def _stages(doc: dict, zero_fill: bool = False, scale: bool = True) -> dict[str, torch.Tensor]:
    """Every stage of one prompt, from the JSON input alone: [T, ...] tensors."""
    x = torch.tensor(doc["x"][0], dtype=torch.float64)  # [T, C]
    q, k, v = (x @ torch.tensor(doc[w], dtype=torch.float64) for w in ("w_q", "w_k", "w_v"))
    raw = q @ k.T  # [T, T]
    scaled = raw / math.sqrt(k.size(1)) if scale else raw
    future = torch.triu(torch.ones_like(raw, dtype=torch.bool), diagonal=1)
    masked = scaled.masked_fill(future, 0.0 if zero_fill else float("-inf"))
    weights = torch.softmax(masked, dim=-1)
    found = {"raw_scores": raw, "scaled_scores": scaled, "masked_scores": masked,
             "weights": weights, "output": weights @ v}  # fmt: skip
    if "w_vocab" in doc:  # section 16: the output scored by the fixed W_vocab
        found["logits"] = found["output"] @ torch.tensor(doc["w_vocab"], dtype=torch.float64)
    return found


def _typed(values: torch.Tensor) -> str:
    return " ".join("-inf" if math.isinf(v) else f"{v:.2f}" for v in values.tolist())


def _grade(doc: dict, text: str, tmp_path: Path):
    """Grade ``text`` exactly as ``attnlab check --input FILE --stage --prompt --row`` does."""
    path = tmp_path / "input.json"
    path.write_text(json.dumps(doc["input"]), encoding="utf-8")
    ask = doc["ask"]
    typed = tuple(parse_numbers(text, "--values", infinity=True))
    answer = handcheck.Answer(ask["stage"], ask["prompt"], typed, ask["row"], 1, text)
    return handcheck.check_answer(answer, handcheck.lab_input(path))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("section", SECTIONS)
def test_a_dealt_exercise_is_graded_as_a_learner_would_expect(
    section: int, seed: int, tmp_path: Path
) -> None:
    doc = practice.document(practice.deal(section, seed), "en")
    stage, row = doc["ask"]["stage"], doc["ask"]["row"]
    right = _stages(doc["input"])[stage][row]
    assert _grade(doc, _typed(right), tmp_path).correct
    wrongs = {"mask_zero_fill": _stages(doc["input"], zero_fill=True)[stage][row],
              "no_scale": _stages(doc["input"], scale=False)[stage][row]}  # fmt: skip
    for name, wrong in wrongs.items():
        if stage == "raw_scores" or (name == "mask_zero_fill" and stage == "scaled_scores"):
            assert torch.equal(wrong, right)  # these mistakes come after the asked stage
            continue
        verdict = _grade(doc, _typed(wrong), tmp_path)
        assert not verdict.correct, f"{name} accepted in {doc['id']}"
        assert name in {m.name for m in verdict.mistakes}, f"{name} not named in {doc['id']}"


@pytest.mark.parametrize("section", SECTIONS)
def test_the_numbers_are_hand_sized_and_the_text_never_shows_the_answer(section: int) -> None:
    for seed in SEEDS:
        doc = practice.document(practice.deal(section, seed), "zh")
        inp = doc["input"]
        T, C = len(inp["x"][0]), len(inp["x"][0][0])
        assert T <= 3 and C <= 4 and len(inp["w_q"][0]) <= 2
        for number in [
            v for m in ("w_q", "w_k", "w_v", "w_vocab") for r in inp.get(m, []) for v in r
        ] + [v for r in inp["x"][0] for v in r]:
            assert number * 10 == round(number * 10), f"{number} has more than one decimal"
        right = _stages(inp)[doc["ask"]["stage"]][doc["ask"]["row"]]
        assert _typed(right) not in doc["text"]
        for v in right.tolist():
            if math.isfinite(v) and v * 2 != round(v * 2):  # not a value the inputs also show
                assert f"{v:.2f}" not in doc["text"] and f"{v:.3f}" not in doc["text"]


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("section", SECTIONS)
def test_the_question_reads_right(section: int, lang: str) -> None:
    """The question line says each thing once ("这一行的这一行的", "of this row's" were read)."""
    for seed in SEEDS[:3]:
        ask = practice.document(practice.deal(section, seed), lang)["text"].splitlines()[-1]
        assert not re.search(r"([\u4e00-\u9fff]{2,})\1", ask), ask
        assert not re.search(r"\b(\w+ \w+) \1\b", ask) and "of this row" not in ask, ask


@given(st.integers(0, 10**6), st.integers(0, 10**6))
def test_different_seeds_deal_different_exercises_and_a_seed_repeats(a: int, b: int) -> None:
    one, again = practice.deal(5, a), practice.deal(5, a)
    assert one == again
    if a != b:
        other = practice.deal(5, b)
        assert (one.x, one.w_q, one.w_k, one.w_v) != (other.x, other.w_q, other.w_k, other.w_v)


def test_json_is_an_input_document_that_check_grades(tmp_path: Path) -> None:
    runner = CliRunner()
    done = runner.invoke(app, ["--lang", "en", "practice", "--section", "6", "--seed", "4",
                               "--json"])  # fmt: skip
    assert done.exit_code == 0, done.output
    doc = json.loads(done.output)
    assert set(doc) == {"id", "section", "input", "ask", "text"} and doc["id"] == "6-4"
    (tmp_path / "in.json").write_text(json.dumps(doc["input"]), encoding="utf-8")
    ask = doc["ask"]
    right = _typed(_stages(doc["input"])[ask["stage"]][ask["row"]])
    args = ["check", "--input", str(tmp_path / "in.json"), "--stage", ask["stage"],
            "--prompt", ask["prompt"], "--row", str(ask["row"]), "--values", right]  # fmt: skip
    assert runner.invoke(app, args).exit_code == 0
    assert runner.invoke(app, [*args[:-1], "9 9"]).exit_code != 0


def test_the_terminal_session_grades_shows_the_solution_and_stops() -> None:
    p = practice.deal(5, 1)
    right = _typed(torch.tensor(p.expected()))
    lines = "\n0 0 0\n" + right + "\ns\nq\n"  # an empty line first: the hint, no error
    done = CliRunner().invoke(app, ["--lang", "en", "practice", "--section", "5", "--seed", "1"],
                              input=lines)  # fmt: skip
    assert done.exit_code == 0, done.output
    assert "✗ Not yet" in done.output and "✓ Right" in done.output
    assert "empty answer" not in done.output and done.output.count("(type your answer;") == 2
    assert f"Answer (row t={p.row}): {right}" in done.output
    assert right not in done.output.split("✓ Right")[0].split("> ")[0]  # not shown before


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["practice", "--section", "7"], "--section must be one of 4, 5, 6, 8, 9, 11, 16, got 7"),
        (["practice", "--seed", "-1"], "--seed must be 0 or more, got -1"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(argv: list[str], message: str) -> None:
    done = CliRunner().invoke(app, ["--lang", "en", *argv])
    assert done.exit_code == 2
    assert message in done.output and "Traceback" not in done.output


def test_the_notebook_deals_and_grades_practice(capsys: pytest.CaptureFixture[str]) -> None:
    from attnlab.notebook.build import build_notebook
    from attnlab.notebook.kernel import practice as notebook_practice

    cells = [c.source for c in build_notebook("en").cells if c.cell_type == "code"]
    dealt = [s for s in cells if "practice(" in s and "import" not in s]
    assert [int(s.split("practice(")[1].split(",")[0]) for s in dealt] == sorted(practice.SECTIONS)
    p = notebook_practice(8, seed=2, lang="en")
    assert repr(p) == practice.exercise_text(practice.deal(8, 2), "en")
    p.check(_typed(torch.tensor(p.dealt.expected())))
    p.check("9 9 9")
    p.solution()
    out = capsys.readouterr().out
    assert "✓ Right" in out and "✗ Not yet" in out and "Answer (row t=2)" in out


def test_the_quiz_deals_a_practice_exercise_after_the_fixed_ones(tmp_path: Path) -> None:
    """After §5's exercises the quiz deals fresh numbers: a wrong and a right answer are graded
    and saved under practice-5 (towards mastery); Enter skips it in another run."""
    from attnlab.cli.quiz_session import Quiz

    said: list[str] = []
    script = iter(["", "0.5", "0.5", "0.5 0.5", "0.5 0.5"])  # question, 5c, 5d (2 tries each)
    dealt: list[practice.Practice] = []  # the exercise the quiz dealt, once it is shown

    def ask(prompt: str) -> str | None:
        assert len(said) < 200, "the quiz keeps asking"
        shown = re.match(r"Practice 5-(\d+)", said[-1])
        if shown:
            dealt.append(cast(practice.Practice, practice.deal(5, int(shown[1]))))
            return "9 9 9"  # wrong first
        if dealt and prompt == "> ":
            return _typed(torch.tensor(dealt[-1].expected()))  # then right
        return next(script, "u")

    with ProgressStore(tmp_path / "quiz.sqlite3") as store:
        Quiz(store, "en", ask, said.append).section(5)
        stored = store.attempts("practice-5")
    tries = [(a["correct"], practice.stored_data(a)["kind"]) for a in stored]
    out = "\n".join(said)
    assert "Practise on numbers you have not seen" in out and "✗ Not yet" in out, out
    assert out.index("Practice 5-") < out.index("Model answer: "), "dealt after the reveal"
    assert tries == [(False, "wrong"), (True, "right")], tries
    skipped = CliRunner().invoke(
        app, ["--lang", "en", "quiz", "--section", "5", "--data-dir", str(tmp_path / "cli")],
        input="\n0.5\n0.5\n0.5 0.5\n0.5 0.5\n\nu\n",
    )  # fmt: skip
    assert skipped.exit_code == 0 and "Week progress: 1 of 20" in skipped.output, skipped.output
    with ProgressStore.open(tmp_path / "cli") as store:
        assert store.attempts("practice-5") == []


def _right(section: int, seed: int) -> str:
    return _typed(torch.tensor(practice.deal(section, seed).expected()))


def test_three_right_in_a_row_master_a_section_and_progress_says_so(tmp_path: Path) -> None:
    """Answers are saved per profile under practice-N; a wrong answer or a shown solution
    starts the run again; attnlab progress shows the run, then ✓."""
    runner = CliRunner()
    store = ["--data-dir", str(tmp_path), "--lang", "en"]

    def session(seed: int, lines: str) -> str:
        args = ["practice", "--section", "8", "--seed", str(seed), *store]
        done = runner.invoke(app, args, input=lines)
        assert done.exit_code == 0, done.output
        return done.output

    assert "1 of 3 right in a row" in session(1, _right(8, 1) + "\nq\n")
    assert "1 of 3" in session(2, "9 9 9\n" + _right(8, 2) + "\nq\n")  # a wrong try starts again
    session(3, "s\nq\n")  # the solution shown: the run starts again
    assert "Practice (mastered after 3" in runner.invoke(app, ["progress", *store]).output
    assert "§8 0/3" in runner.invoke(app, ["progress", *store]).output
    for seed in (4, 5, 6):
        out = session(seed, _right(8, seed) + "\nq\n")
    assert "3 of 3" in out
    assert "§8 ✓" in runner.invoke(app, ["progress", *store]).output


def test_the_streak_rule() -> None:
    right = {"correct": True, "diagnosis": '{"kind": "right", "seed": 1}'}
    again = {"correct": True, "diagnosis": '{"kind": "right", "seed": 1}'}  # the same exercise
    other = {"correct": True, "diagnosis": '{"kind": "right", "seed": 2}'}
    wrong = {"correct": False, "diagnosis": '{"kind": "wrong", "seed": 3}'}
    shown = {"correct": None, "diagnosis": '{"kind": "solution", "seed": 3}'}
    assert practice.streak([right, again, other]) == 2
    assert practice.streak([right, other, wrong]) == 0
    assert practice.streak([right, other, shown]) == 0
    assert not practice.mastered([right, other, shown, right])
    three = {"correct": True, "diagnosis": '{"kind": "right", "seed": 9}'}
    assert practice.mastered([right, other, three, wrong])  # once mastered, it stays


def test_the_web_progress_shows_the_terminals_practice(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from attnlab.web.app import create_app

    args = ["practice", "--section", "11", "--seed", "5", "--data-dir", str(tmp_path)]
    assert CliRunner().invoke(app, args, input=_right(11, 5) + "\nq\n").exit_code == 0
    client = TestClient(
        create_app(data_dir=tmp_path, figures_on=False), base_url="http://127.0.0.1"
    )
    assert client.get("/api/progress").json()["practice"] == {"11": {"run": 1, "mastered": False}}


def test_review_takes_the_unmastered_computations_first() -> None:
    from attnlab.cli.quiz_session import plan
    from attnlab.progress.summary import Summary

    marked = Summary("default", (), {2: "review", 5: "review", 8: "review"}, None, 0, 0)
    assert plan(marked, None, True, unmastered={8}) == [8, 2, 5]
    assert plan(marked, None, True) == [2, 5, 8]


def test_the_web_deals_grades_in_place_shows_the_solution_and_deals_anew(tmp_path: Path) -> None:
    """Without JavaScript: a GET deals, a form POST grades and comes back to the verdict, the
    solution form shows every stage, "new numbers" deals another; progress counts the run."""
    from fastapi.testclient import TestClient
    from web_support import ORIGIN, post_form

    from attnlab.web.app import create_app

    client = TestClient(create_app(data_dir=tmp_path, figures_on=False), base_url=ORIGIN)
    section = client.get("/section/5?lang=en").text
    assert 'href="/practice/5?lang=en"' in section
    first = client.get("/practice/5?lang=en", follow_redirects=False)
    assert first.status_code == 303 and "seed=" in first.headers["location"]
    page = client.get("/practice/5?lang=en&seed=3").text
    assert practice.exercise_text(practice.deal(5, 3), "en").splitlines()[0] in page
    right = _right(5, 3)
    assert right not in page  # the page never shows the answer before it is asked for
    done = post_form(client, "/practice/5/answer?lang=en", seed="3", answer="9 9 9")
    assert done.status_code == 303 and done.headers["location"].endswith("seed=3#verdict")
    assert "✗ Not yet" in client.get(done.headers["location"]).text
    done = post_form(client, "/practice/5/answer?lang=en", seed="3", answer=right)
    page = client.get(done.headers["location"]).text
    assert "✓ Right" in page and "1 of 3" in page
    done = post_form(client, "/practice/5/solution?lang=en", seed="3")
    page = client.get(done.headers["location"]).text
    assert f"Answer (row t=1): {right}" in page and "0 of 3" in page
    assert client.get("/api/progress").json()["practice"] == {"5": {"run": 0, "mastered": False}}


@pytest.mark.parametrize(
    ("url", "status"),
    [("/practice/7?lang=en", 404), ("/practice/x?lang=en", 404),
     ("/practice/5?lang=en&seed=-1", 422), ("/practice/5?lang=en&seed=1e3", 422)],
)  # fmt: skip
def test_the_web_refuses_a_section_or_seed_it_cannot_deal(
    tmp_path: Path, url: str, status: int
) -> None:
    from fastapi.testclient import TestClient

    from attnlab.web.app import create_app

    client = TestClient(
        create_app(data_dir=tmp_path, figures_on=False), base_url="http://127.0.0.1"
    )
    r = client.get(url)
    assert r.status_code == status and "Traceback" not in r.text


def _shapes_by_torch(sizes: dict) -> dict[str, tuple[int, ...]]:
    """Section 9's stages for the dealt sizes, from plain torch calls (not attnlab's module)."""
    B, T, C, H = sizes["batch"], sizes["tokens"], sizes["embed"], sizes["heads"]
    x = torch.randn(B, T, C)
    q = x.view(B, T, H, C // H).transpose(1, 2)  # [B, H, T, d]
    scores = q @ q.transpose(-2, -1)  # [B, H, T, T]
    heads = torch.softmax(scores, dim=-1) @ q  # [B, H, T, d]
    return {"qkv": tuple(q.shape), "scores": tuple(scores.shape),
            "weights": tuple(scores.shape), "head_outputs": tuple(heads.shape),
            "merged": tuple(heads.transpose(1, 2).reshape(B, T, C).shape)}  # fmt: skip


@given(st.integers(0, 10**6))
def test_a_dealt_shape_is_graded_as_a_learner_would_expect(seed: int) -> None:
    p = practice.deal(9, seed)
    doc = practice.document(p, "en")
    sizes, stage = doc["input"], doc["ask"]["stage"]
    assert len({sizes["batch"], sizes["tokens"], sizes["heads"], sizes["embed"],
                sizes["embed"] // sizes["heads"]}) == 5  # fmt: skip
    right = _shapes_by_torch(sizes)[stage]
    typed = " ".join(str(n) for n in right)
    assert p.grade(typed).correct and p.grade(str(list(right))).correct
    assert typed not in doc["text"] and str(list(right)) not in doc["text"]
    swapped = (right[0], right[2], right[1], *right[3:])  # two axes exchanged
    verdict = p.grade(" ".join(str(n) for n in swapped))
    assert not verdict.correct and "shape_order" in verdict.slips
    line = practice.verdict_line(p, verdict, "", "en")
    assert "the right sizes in the wrong order" in line
    assert p.grade(" ".join(str(n) for n in right[:-1])).kind == "count"


def test_a_shape_read_before_the_transpose_is_named() -> None:
    p = next(d for s in range(50) if (d := practice.deal(9, s)).stage == "qkv")
    B, H, T, d = p.shape
    verdict = p.grade(f"{B} {T} {H} {d}")
    assert set(verdict.slips) == {"shape_order", "shape_of:split_view"}
    for lang, words in (("en", "Q after the view, before the transpose"),
                        ("zh", "view 之后、transpose 之前的 Q")):  # fmt: skip
        assert words in practice.verdict_line(p, verdict, "", lang)
    with pytest.raises(InputError, match="whole sizes"):
        p.grade(f"{B} {H} {T} {d}.5")


@pytest.mark.parametrize("sep", ["x", "×", " x ", "X", "*"])
def test_a_shape_written_with_times_signs_is_read_as_sizes(sep: str) -> None:
    p = practice.deal(9, 1)
    wrong = (p.shape[0] + 1, *p.shape[1:])
    assert p.grade(sep.join(str(n) for n in p.shape)).correct
    assert p.grade(sep.join(str(n) for n in wrong)).kind == "wrong"


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_an_unreadable_shape_is_told_it_needs_sizes_not_a_number_like_0_599(lang: str) -> None:
    p = practice.deal(9, 1)
    with pytest.raises(InputError) as caught:
        p.grade("four by three")
    said = caught.value.localized(lang)
    assert "0.599" not in said, said
    B, T, C = p.batch, p.tokens, p.embed
    wanted = {"zh": f"需要用空格分开的各轴大小（例如 {B} {T} {C}），收到的是 'four'",
              "en": f"expected the size of each axis, separated by spaces (such as {B} {T} {C}), "
                    "got 'four'"}[lang]  # fmt: skip
    assert said.endswith(wanted), said


@pytest.mark.parametrize(
    ("section", "typed", "zh", "en"),
    [(5, "abc", "回答：需要像 0.599", "answer: expected a number like 0.599"),
     (9, "abc", "回答：需要用空格分开的各轴大小", "answer: expected the size of each axis")],
)  # fmt: skip
def test_a_refused_practice_answer_names_the_field_in_the_pages_language(
    tmp_path: Path, section: int, typed: str, zh: str, en: str
) -> None:
    from fastapi.testclient import TestClient
    from web_support import ORIGIN, post_form

    from attnlab.web.app import create_app

    client = TestClient(create_app(data_dir=tmp_path, figures_on=False), base_url=ORIGIN)
    client.get("/healthz")
    for lang, start in (("zh", zh), ("en", en)):
        url = f"/practice/{section}/answer?lang={lang}"
        refused = post_form(client, url, seed="1", answer=typed)
        shown = re.search(r'id="error-message">([^<]*)<', refused.text)
        assert refused.status_code == 422 and shown is not None, refused.status_code
        assert shown.group(1).startswith(start), shown.group(1)
        if lang == "zh":
            assert "answer" not in shown.group(1), shown.group(1)
