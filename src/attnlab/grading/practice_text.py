"""The words of a dealt numeric exercise (:mod:`attnlab.grading.practice`): its inputs as small
tables and its question, and the worked solution stage by stage."""

from __future__ import annotations

from attnlab.grading.practice import D_HEAD, DECIMALS, Practice, answer_text

#: What each asked stage means for a hand computation, and how the masked places are written.
_ASK = {
    "raw_scores": ("原始分数 q·k（未缩放、未掩码）", "the raw scores q·k (not scaled, not masked)"),
    "scaled_scores": ("缩放后的分数 q·k/√d_k（未掩码）", "the scaled scores q·k/√d_k (not masked)"),
    "masked_scores": ("掩码后的分数（先缩放；看不到的未来位置写 -inf）",
                      "the masked scores (scaled first; write -inf where the future is hidden)"),
    "weights": ("注意力权重（缩放、掩码、按行 softmax；未来位置写 0）",
                "the attention weights (scale, mask, softmax along the row; 0 for the future)"),
    "output": ("输出 weights·V（d_head 个数）", "the output weights·V (d_head numbers)"),
    "logits": ("logits：先算输出 h = weights·V，再乘 W_vocab（每个词表 ID 一个数）",
               "the logits: first the output h = weights·V, then h·W_vocab (one number per "
               "vocabulary ID)"),
}  # fmt: skip


def _matrix(name: str, rows: tuple[tuple[float, ...], ...], labels: list[str]) -> list[str]:
    cells = [[f"{v:g}" for v in row] for row in rows]
    wide = max(len(c) for row in cells for c in row)
    pad = max(len(label) for label in labels)
    return [name] + [
        f"  {label.ljust(pad)}  [" + ", ".join(c.rjust(wide) for c in row) + "]"
        for label, row in zip(labels, cells, strict=True)
    ]


def _vocab(w_vocab: tuple[tuple[float, ...], ...] | None) -> list[str]:
    if w_vocab is None:
        return []
    V = len(w_vocab[0])
    return _matrix(f"W_vocab [d_head={D_HEAD}, V={V}]", w_vocab, [f"d={d}" for d in range(D_HEAD)])


def numbers_text(p: Practice, lang: str) -> str:
    """The exercise as the learner reads it: the tokens, X and the three weight matrices (and
    W_vocab for the logits) as small tables, and what to compute. It never contains the
    answer."""
    zh = lang == "zh"
    tokens = p.tokens(lang)
    rows = [f"t={t} {tok}" for t, tok in enumerate(tokens)]
    C = len(p.x[0])
    features = [f"c={c}" for c in range(C)]
    ask = _ASK[p.stage][0 if zh else 1]
    lines = [
        (f"练习 {p.id}（第 {p.section} 节）：一个提示，{len(tokens)} 个词元：" if zh
         else f"Practice {p.id} (section {p.section}): one prompt of {len(tokens)} tokens: ")
        + " ".join(tokens),
        "",
        *_matrix(f"X [T={len(tokens)}, C={C}]" + ("（每行一个词元）" if zh else
                                                   " (a row per token)"), p.x, rows),
        *_matrix(f"W_Q [C={C}, d_head={D_HEAD}]", p.w_q, features),
        *_matrix(f"W_K [C={C}, d_head={D_HEAD}]", p.w_k, features),
        *_matrix(f"W_V [C={C}, d_head={D_HEAD}]", p.w_v, features),
        *_vocab(p.w_vocab),
        "",
        (f"请算出 t={p.row}（{tokens[p.row]}）这一行的{ask}，保留 {DECIMALS} 位小数，用空格分开。"
         if zh else
         f"Compute row t={p.row} ({tokens[p.row]}) of {ask}, to {DECIMALS} decimals, separated by "
         "spaces."),
    ]  # fmt: skip
    return "\n".join(lines)


def numbers_solution(p: Practice, lang: str) -> str:
    """The worked solution: every stage up to the asked one for these numbers, then the row."""
    from attnlab.content.explain import title

    labels = [f"t={t} {tok}" for t, tok in enumerate(p.tokens(lang))]
    pad = max(len(label) for label in labels)
    out = []
    for stage, t in p.solution():  # every stage is [T, ...] for one prompt
        out.append(title(stage, lang))
        for label, row in zip(labels, t.tolist(), strict=True):
            numbers = answer_text(row, 0 if stage == "x" else 3).replace(" ", ", ")
            out.append(f"  {label.ljust(pad)}  [{numbers}]")
    right = answer_text(p.expected())
    out.append(("答案（第 t=%d 行）：" if lang == "zh" else "Answer (row t=%d): ") % p.row + right)
    return "\n".join(out)
