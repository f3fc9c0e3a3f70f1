"""One input model: the lesson's example, a learner's file and the explorer's form share
:class:`~attnlab.inputs.model.LabInput`, its lesson input and its checks."""

from __future__ import annotations

import re
from typing import Any

import pytest
import torch

from attnlab.core.steps import lesson_input
from attnlab.inputs import explorer
from attnlab.inputs.model import LabInput, is_whole, parse_input
from attnlab.mistakes import diagnosis
from attnlab.text.errors import InputError


def test_the_lesson_input_is_one_object_seen_two_ways() -> None:
    lab = LabInput.lesson("en")
    inp = lesson_input()
    assert lab.x is inp.x and lab.w_q is inp.w_q and lab.w_v is inp.w_v
    assert lab.tokens[0] and lab.num_heads is None
    mine = lab.mistake_input()  # through the pipeline, not the lesson's stored numbers
    right, again = diagnosis.correct_stages(inp), diagnosis.correct_stages(mine)
    for stage in ("weights", "output"):
        diff = (right[stage] - again[stage]).abs().max().item()
        assert diff < 1e-12, f"{stage}: max |diff| {diff}"


def test_a_file_with_heads_becomes_the_mistakes_input() -> None:
    lab = parse_input({"x": [[[1.0, 0.0], [0.0, 1.0]]], "w_q": [[1.0, 0.0], [0.0, 1.0]],
                       "w_k": [[1.0, 0.0], [0.0, 1.0]], "w_v": [[1.0, 0.0], [0.0, 1.0]],
                       "num_heads": 2})  # fmt: skip
    inp = lab.mistake_input()
    assert inp.num_heads == 2 and not inp.is_single_head and torch.equal(inp.x, lab.x)


def test_whole_numbers_as_json_writes_them() -> None:
    assert is_whole(2) and not is_whole(True) and not is_whole(2.0) and not is_whole("2")


PAYLOAD: dict[str, Any] = {"x": [[[1.0]]], "w_q": [[1.0]], "w_k": [[1.0]], "w_v": [[1.0]]}


@pytest.mark.parametrize(
    ("tokens", "file_words", "explorer_words"),
    [
        ([["a"], ["b"]], "tokens: expected 1 rows (B from x) but found a list",
         "tokens: expected a list of 1 entries but found a list of 2"),
        ([["a", "b"]], "tokens[0]: expected 1 labels (T from x) but found a list",
         "tokens[0]: expected a list of 1 entries but found a list of 2"),
        ([[7]], "tokens[0][0]: expected a string but found",
         "tokens[0][0]: expected a text label but found 7"),
    ],
)  # fmt: skip
def test_file_and_explorer_refuse_the_same_labels_in_their_own_words(
    tokens: Any, file_words: str, explorer_words: str
) -> None:
    with pytest.raises(InputError, match=re.escape(file_words)):
        parse_input({**PAYLOAD, "tokens": tokens})
    with pytest.raises(explorer.ExplorerError) as found:
        explorer.check_payload({**PAYLOAD, "tokens": tokens})
    assert str(found.value) == explorer_words
