"""The three code listings a learner copies (sections 12, 13 and 15), as templates.

Our own code, written for pasting into a file: every listing imports what it uses and runs with
PyTorch alone. ``$name`` placeholders (:class:`string.Template`) are filled by
:mod:`attnlab.content.listings`: ``$doc`` with the listing's docstring in the chosen language,
``$data`` with the lesson's X, W_Q, W_K and W_V (from :mod:`attnlab.core.example`, token labels in
the
chosen language), ``$head_class`` with :data:`HEAD_CLASS`. No number of the lesson is typed here.
"""

from __future__ import annotations

#: Section 12: every stage of one causal head on the fixed example, printed.
SCRIPT = """\
$doc

import math

import torch

torch.set_default_dtype(torch.float64)  # float64: the lesson's numbers, digit for digit
torch.set_printoptions(precision=4, sci_mode=False)
SQRT2 = math.sqrt(2)

$data

query = x @ w_q  # [B, T, C] @ [C, d_head] -> [B, T, d_head]
key = x @ w_k  # [B, T, d_head]
value = x @ w_v  # [B, T, d_head]

d_head = key.size(-1)
raw_scores = query @ key.transpose(-2, -1)  # [B, T, d_head] @ [B, d_head, T] -> [B, T, T]
scaled_scores = raw_scores / math.sqrt(d_head)  # [B, T, T]

T = x.size(1)
causal_mask = torch.ones(T, T, dtype=torch.bool).tril()  # [T, T]: True where t may read j
# The future gets -inf before the softmax: exp(-inf) = 0 (a 0 score would still get weight).
masked_scores = scaled_scores.masked_fill(~causal_mask, float("-inf"))  # [B, T, T]
weights = masked_scores.softmax(dim=-1)  # [B, T, T]: each row sums to 1 over the keys
output = weights @ value  # [B, T, T] @ [B, T, d_head] -> [B, T, d_head]

stages = {
    "Q": query,
    "K": key,
    "V": value,
    "Raw scores": raw_scores,
    "Scaled scores": scaled_scores,
    "Masked scores": masked_scores,
    "Attention weights": weights,
    "Head output": output,
}
for name, tensor in stages.items():
    print(f"{name} {list(tensor.shape)}:\\n{tensor}\\n")


def row(values: torch.Tensor) -> str:
    return "[" + ", ".join(f"{v:.4f}" for v in values.tolist()) + "]"


print("Final rows (4 decimals)")
for b, prompt in enumerate("AB"):
    print(f"Prompt {prompt} weights: {row(weights[b, -1])}")
for b, prompt in enumerate("AB"):
    print(f"Prompt {prompt} output:  {row(output[b, -1])}")
"""

#: Section 13: one causal head as an ``nn.Module`` (the class both module listings share).
HEAD_CLASS = '''\
class AttentionHead(nn.Module):
    """One causal head: softmax(mask(Q K^T / sqrt(d_head))) V, [B, T, C] -> [B, T, d_head]."""

    def __init__(self, embed_dim: int, head_size: int, context_length: int) -> None:
        super().__init__()
        self.query = nn.Linear(embed_dim, head_size, bias=False)  # weight: [d_head, C]
        self.key = nn.Linear(embed_dim, head_size, bias=False)
        self.value = nn.Linear(embed_dim, head_size, bias=False)
        # A buffer, not a parameter: it follows .to(device) and is never trained.
        mask = torch.ones(context_length, context_length, dtype=torch.bool).tril()
        self.register_buffer("causal_mask", mask)  # [context_length, context_length]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        T = x.size(1)  # x: [B, T, C]
        limit = self.causal_mask.size(0)
        if T > limit:
            raise ValueError(f"sequence length T={T} exceeds context_length={limit}")
        query = self.query(x)  # [B, T, d_head]
        key = self.key(x)  # [B, T, d_head]
        value = self.value(x)  # [B, T, d_head]
        raw_scores = query @ key.transpose(-2, -1)  # [B, T, T]
        scaled_scores = raw_scores / math.sqrt(key.size(-1))  # [B, T, T]
        visible = self.causal_mask[:T, :T]  # [T, T]: one mask fits every shorter T
        masked_scores = scaled_scores.masked_fill(~visible, float("-inf"))  # [B, T, T]
        weights = masked_scores.softmax(dim=-1)  # [B, T, T]
        return weights @ value  # [B, T, d_head]
'''

#: Section 13's listing: the head, then the lesson's example run through it.
HEAD = """\
$doc

import math

import torch
from torch import nn


$head_class

def row(values: torch.Tensor) -> str:
    return "[" + ", ".join(f"{v:.4f}" for v in values.tolist()) + "]"


if __name__ == "__main__":
    torch.set_default_dtype(torch.float64)  # the lesson's numbers, digit for digit
    SQRT2 = math.sqrt(2)
$data

    head = AttentionHead(x.size(-1), w_q.size(-1), context_length=8)
    with torch.no_grad():  # nn.Linear keeps the transpose of the formula's [C, d_head]
        head.query.weight.copy_(w_q.T)
        head.key.weight.copy_(w_k.T)
        head.value.weight.copy_(w_v.T)
    output = head(x)  # [B, T, d_head]
    for b, prompt in enumerate("AB"):
        print(f"Prompt {prompt} output:  {row(output[b, -1])}")
"""

#: Section 15's listing: the head again (so it runs alone), the multi-head module and a demo.
MULTIHEAD = '''\
$doc

import math

import torch
from torch import nn


$head_class

class MultiHeadAttention(nn.Module):
    """n_head heads on the same x, side by side, then W_O: [B, T, C] -> [B, T, C]."""

    def __init__(self, embed_dim: int, num_heads: int, context_length: int) -> None:
        super().__init__()
        if embed_dim % num_heads != 0:
            raise ValueError(
                f"embed_dim must be divisible by num_heads, got {embed_dim} and {num_heads}"
            )
        head_size = embed_dim // num_heads  # d_head = C / n_head
        self.heads = nn.ModuleList(
            AttentionHead(embed_dim, head_size, context_length) for _ in range(num_heads)
        )
        self.output_projection = nn.Linear(embed_dim, embed_dim, bias=False)  # W_O: [C, C]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        per_head = [head(x) for head in self.heads]  # n_head x [B, T, d_head], all read x
        concat = torch.cat(per_head, dim=-1)  # [B, T, C]: the heads side by side
        return self.output_projection(concat)  # [B, T, C]: W_O mixes the heads


def row(values: torch.Tensor) -> str:
    return "[" + ", ".join(f"{v:.4f}" for v in values.tolist()) + "]"


if __name__ == "__main__":
    torch.set_default_dtype(torch.float64)  # the lesson's numbers, digit for digit
    SQRT2 = math.sqrt(2)
$data

    C, d_head = x.size(-1), w_q.size(-1)
    mha = MultiHeadAttention(C, num_heads=C // d_head, context_length=8)
    lesson_head, uniform_head = mha.heads
    with torch.no_grad():
        for layer, w in [("query", w_q), ("key", w_k), ("value", w_v)]:
            getattr(lesson_head, layer).weight.copy_(w.T)  # nn.Linear keeps [d_head, C]
            getattr(uniform_head, layer).weight.copy_(w.T)
        uniform_head.query.weight.zero_()  # every score 0: a plain mean of the visible values
        mha.output_projection.weight.copy_(torch.eye(C))  # W_O = I: the heads side by side
    output = mha(x)  # [B, T, C]
    for b, prompt in enumerate("AB"):
        print(f"Prompt {prompt} output:  {row(output[b, -1])}")
'''

#: The listings' docstrings (line breaks as shown): what the file does and how to run it;
#: ``{file}`` is the file name :data:`attnlab.content.listings.FILES` suggests.
DOCS: dict[str, dict[str, str]] = {
    "zh": {
        "script": "第 7 周 · 因果自注意力：用本课的固定例子，\n"
        "一步一步算出 Q、K、V、分数、掩码、权重和输出。\n\n"
        "保存为 {file}，运行：python {file}\n"
        "（只需要 PyTorch）。",
        "head": "第 7 周 · 可复用的因果注意力 Head（一个 nn.Module）。\n\n"
        "保存为 {file}，运行：python {file}\n"
        "它把本课的 W_Q、W_K、W_V 装进 Head，打印两条提示最后一行的输出。",
        "multihead": "第 7 周 · Multi-Head Attention：几个 Head 读同一个 x，拼接后乘 W_O。"
        "\n\n"
        "保存为 {file}，运行：python {file}\n"
        "Head 1 用本课的权重；Head 2 的 W_Q 为 0，所有分数相等，\n"
        "就是第 1 节的均匀平均；W_O 取单位矩阵，\n"
        "所以输出的前 d_head 列正是本课单个 Head 的输出。",
    },
    "en": {
        "script": "Week 7, causal self-attention: the lesson's fixed example, one step at a time\n"
        "(Q, K, V, scores, mask, weights, output).\n\n"
        "Save as {file} and run: python {file}\n"
        "(it needs only PyTorch).",
        "head": "Week 7: a reusable causal attention head (an nn.Module).\n\n"
        "Save as {file} and run: python {file}\n"
        "It loads the lesson's W_Q, W_K, W_V into the head and prints the final rows.",
        "multihead": "Week 7: multi-head attention: heads read the same x, side by side, then W_O."
        "\n\n"
        "Save as {file} and run: python {file}\n"
        "Head 1 gets the lesson's weights; head 2 a zero W_Q, so all its scores are equal\n"
        "(section 1's uniform mean); W_O is the identity, so the first d_head output columns\n"
        "are the lesson's single-head output.",
    },
}
