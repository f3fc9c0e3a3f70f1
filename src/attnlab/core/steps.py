"""The steps of attention as a learner writes them, right and wrong.

A :class:`Recipe` names one function per step (embed, project, split, scores, scale, mask,
softmax, retrieve, merge, output projection, hand-on to the LM head). Its defaults are the
lesson's steps; a mistake of :mod:`attnlab.mistakes.catalogue` replaces exactly one of them with the
buggy line, and section 11's demonstration (:mod:`attnlab.lesson.demos`) runs :data:`ZERO_FILL`.
This is the deliberate second copy of the attention steps (wrong numbers must be computed too);
tests pin the default recipe to :mod:`attnlab.core.pipeline`. Axis letters as in
:mod:`attnlab.core.pipeline`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from attnlab.core import example

Tensor = torch.Tensor


@dataclass(frozen=True)
class MistakeInput:
    """What a recipe runs on.

    Args:
        x: ``[B, T, C]`` input vectors.
        w_q, w_k, w_v: formula-convention projections ``[C, n_head * d_head]``; head h owns
            columns ``h*d_head:(h+1)*d_head``.
        num_heads: ``n_head``; 1 with ``w_o=None`` is the lesson's single head.
        w_o: ``[C, C]`` output projection, or None (no projection).
        token_ids: ``[B, T]`` token IDs, or None for an input of vectors alone (then no
            ``token_ids_as_x`` mistake can be made on it).
        w_vocab: ``[d, V_vocab]`` scoring layer of section 16, for ``logits``.
    """

    x: Tensor
    w_q: Tensor
    w_k: Tensor
    w_v: Tensor
    num_heads: int = 1
    w_o: Tensor | None = None
    token_ids: Tensor | None = None
    w_vocab: Tensor | None = None

    @property
    def is_single_head(self) -> bool:
        """True for the lesson's single head (one head, no ``W_O``)."""
        return self.num_heads == 1 and self.w_o is None


@functools.cache
def lesson_input() -> MistakeInput:
    """The lesson's single head on prompts A and B, with section 16's ``W_vocab``: the one
    lesson input (one shared object, so :func:`attnlab.mistakes.diagnosis.correct_stages` knows
    it and answers with the lesson's numbers; :meth:`attnlab.inputs.model.LabInput.lesson` adds
    the prompts' token labels)."""
    return MistakeInput(
        x=example.lesson_x(),
        w_q=example.lesson_w_q(),
        w_k=example.lesson_w_k(),
        w_v=example.lesson_w_v(),
        token_ids=example.lesson_token_ids(),
        w_vocab=example.lesson_w_vocab(),
    )


def _keep(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.bool))  # [T, T], True = may read


# --- the lesson's steps (defaults) ----------------------------------------------------------


def embed(inp: MistakeInput) -> Tensor:
    return inp.x  # [B, T, C]


def project(x: Tensor, inp: MistakeInput) -> tuple[Tensor, Tensor, Tensor]:
    return x @ inp.w_q, x @ inp.w_k, x @ inp.w_v  # [B, T, n_head*d_head] each


def split(t: Tensor, n_head: int) -> Tensor:
    B, T, width = t.shape
    return t.view(B, T, n_head, width // n_head).transpose(1, 2)  # [B, n_head, T, d_head]


def fold(t: Tensor) -> Tensor:
    return t  # [B, n_head, T, d]


def scores(q: Tensor, k: Tensor) -> Tensor:
    return q @ k.transpose(-2, -1)  # [..., T, T]


def scale(s: Tensor, d_head: int, C: int) -> Tensor:
    return s / math.sqrt(d_head)


def mask(s: Tensor) -> Tensor:
    return s.masked_fill(~_keep(s.size(-1)), float("-inf"))


def softmax(s: Tensor) -> Tensor:
    return torch.softmax(s, dim=-1)  # over the key axis


def retrieve(w: Tensor, k: Tensor, v: Tensor) -> Tensor:
    return w @ v  # [..., T, d_head]


def merge(o: Tensor) -> Tensor:
    B, n_head, T, d = o.shape
    return o.transpose(1, 2).reshape(B, T, n_head * d)  # [B, T, C]


def out_proj(concat: Tensor, w_o: Tensor | None) -> Tensor:
    return concat if w_o is None else concat @ w_o  # [B, T, C]


def hand_on(output: Tensor, weights: Tensor) -> Tensor:
    return output  # what the LM head reads: contextual features


# --- the mistakes' replacements -------------------------------------------------------------


def embed_token_ids(inp: MistakeInput) -> Tensor:
    if inp.token_ids is None:
        raise ValueError("token_ids_as_x needs the input's token IDs [B, T], got None")
    ids = inp.token_ids  # [B, T]
    B, T, C = inp.x.shape
    return ids.to(inp.x.dtype).unsqueeze(-1).expand(B, T, C)  # every feature = the ID


def project_swapped(x: Tensor, inp: MistakeInput) -> tuple[Tensor, Tensor, Tensor]:
    return x @ inp.w_k, x @ inp.w_q, x @ inp.w_v


def project_key_from_query(x: Tensor, inp: MistakeInput) -> tuple[Tensor, Tensor, Tensor]:
    return x @ inp.w_q, x @ inp.w_q, x @ inp.w_v


def split_no_transpose(t: Tensor, n_head: int) -> Tensor:
    B, T, width = t.shape
    return t.view(B, n_head, T, width // n_head)  # runs, but mixes tokens and features


def fold_batch(t: Tensor) -> Tensor:
    B, n_head, T, d = t.shape
    return t.transpose(0, 1).reshape(1, n_head, B * T, d)  # one long sequence of B*T tokens


def scores_reshaped(q: Tensor, k: Tensor) -> Tensor:
    *lead, T, d = k.shape
    return q @ k.reshape(*lead, d, T)  # a reshape keeps memory order: not a transpose


def scores_transposed(q: Tensor, k: Tensor) -> Tensor:
    return k @ q.transpose(-2, -1)  # Sᵀ: rows are keys


def scale_none(s: Tensor, d_head: int, C: int) -> Tensor:
    return s


def scale_by_d(s: Tensor, d_head: int, C: int) -> Tensor:
    return s / d_head


def scale_by_sqrt_c(s: Tensor, d_head: int, C: int) -> Tensor:
    return s / math.sqrt(C)


def mask_none(s: Tensor) -> Tensor:
    return s


def mask_zero_fill(s: Tensor) -> Tensor:
    return s.masked_fill(~_keep(s.size(-1)), 0.0)


def mask_upper(s: Tensor) -> Tensor:
    keep = torch.triu(torch.ones(s.size(-1), s.size(-1), dtype=torch.bool))  # the wrong triangle
    return s.masked_fill(~keep, float("-inf"))


def mask_off_by_one(s: Tensor) -> Tensor:
    keep = torch.tril(torch.ones(s.size(-1), s.size(-1), dtype=torch.bool), diagonal=-1)
    return s.masked_fill(~keep, float("-inf"))


def softmax_then_mask(s: Tensor) -> Tensor:
    return torch.softmax(s, dim=-1).masked_fill(~_keep(s.size(-1)), 0.0)


def softmax_query_axis(s: Tensor) -> Tensor:
    return torch.softmax(s, dim=-2)


def retrieve_keys(w: Tensor, k: Tensor, v: Tensor) -> Tensor:
    return w @ k


def merge_time_axis(o: Tensor) -> Tensor:
    B, n_head, T, d = o.shape
    return torch.cat(o.unbind(1), dim=1).view(B, T, n_head * d)  # [B, n_head*T, d] → [B, T, C]


def out_proj_none(concat: Tensor, w_o: Tensor | None) -> Tensor:
    return concat


def hand_on_weights(output: Tensor, weights: Tensor) -> Tensor:
    return weights  # [B, T, T]: where to read, not what was read


@dataclass(frozen=True)
class Recipe:
    """One function per step; the defaults are the lesson's steps."""

    embed: Callable[[MistakeInput], Tensor] = embed
    project: Callable[[Tensor, MistakeInput], tuple[Tensor, Tensor, Tensor]] = project
    split: Callable[[Tensor, int], Tensor] = split
    fold: Callable[[Tensor], Tensor] = fold
    scores: Callable[[Tensor, Tensor], Tensor] = scores
    scale: Callable[[Tensor, int, int], Tensor] = scale
    mask: Callable[[Tensor], Tensor] = mask
    softmax: Callable[[Tensor], Tensor] = softmax
    retrieve: Callable[[Tensor, Tensor, Tensor], Tensor] = retrieve
    merge: Callable[[Tensor], Tensor] = merge
    out_proj: Callable[[Tensor, Tensor | None], Tensor] = out_proj
    hand_on: Callable[[Tensor, Tensor], Tensor] = hand_on


#: Section 11's mistake, the future filled with 0 instead of −∞: the lesson's demonstration and
#: the catalogue's ``mask_zero_fill`` both run this one recipe.
ZERO_FILL = Recipe(mask=mask_zero_fill)


def lm_head(features: Tensor, w_vocab: Tensor | None) -> Tensor | None:
    """``features @ w_vocab`` when the widths fit, else None."""
    if w_vocab is None or features.size(-1) != w_vocab.size(0):
        return None
    return features @ w_vocab  # [B, T, V_vocab]


def _unfold(t: Tensor, B: int) -> Tensor:
    _, n_head, BT, d = t.shape
    return t.reshape(n_head, B, BT // B, d).transpose(0, 1)  # [B, n_head, T, d]


def run(recipe: Recipe, inp: MistakeInput) -> dict[str, Tensor]:
    """Every stage of ``recipe`` on ``inp``; per-head axes are dropped for a single head."""
    x = recipe.embed(inp)  # [B, T, C]
    B, _, C = x.shape
    q, k, v = (recipe.split(t, inp.num_heads) for t in recipe.project(x, inp))
    fq, fk, fv = recipe.fold(q), recipe.fold(k), recipe.fold(v)  # [B', n_head, T', d_head]
    raw = recipe.scores(fq, fk)  # [B', n_head, T', T']
    scaled = recipe.scale(raw, q.size(-1), C)
    masked = recipe.mask(scaled)
    weights = recipe.softmax(masked)
    head_out = recipe.retrieve(weights, fk, fv)  # [B', n_head, T', d_head]
    if head_out.size(0) != B:
        head_out = _unfold(head_out, B)  # [B, n_head, T, d_head]
    concat = recipe.merge(head_out)  # [B, T, C]
    output = recipe.out_proj(concat, inp.w_o)
    stages = {"x": x, "q": q, "k": k, "v": v, "raw_scores": raw, "scaled_scores": scaled,
              "masked_scores": masked, "weights": weights, "concat": concat}  # fmt: skip
    if inp.is_single_head:
        stages = {n: t[:, 0] if t.dim() == 4 else t for n, t in stages.items()}
        del stages["concat"]
    stages["output"] = output
    # What the LM head reads: the output (hand_on_weights changes only the logits).
    logits = lm_head(recipe.hand_on(output, stages["weights"]), inp.w_vocab)
    if logits is not None:
        stages["logits"] = logits
    return stages
