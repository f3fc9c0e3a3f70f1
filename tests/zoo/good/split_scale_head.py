"""Correct: scales q and k by d^-1/4 each before their product (the scores are already scaled)."""
import torch
import torch.nn as nn


class AttentionHead(nn.Module):
    def __init__(self, embed_dim, head_size, context_length):
        super().__init__()
        self.query = nn.Linear(embed_dim, head_size, bias=False)
        self.key = nn.Linear(embed_dim, head_size, bias=False)
        self.value = nn.Linear(embed_dim, head_size, bias=False)
        self.register_buffer("allowed", torch.tril(torch.ones(context_length, context_length, dtype=torch.bool)))

    def forward(self, x):
        T = x.size(1)
        d = self.query.out_features
        q = self.query(x) * d**-0.25
        k = self.key(x) * d**-0.25
        scores = torch.bmm(q, k.transpose(1, 2))
        scores = torch.where(self.allowed[:T, :T], scores, float("-inf"))
        return torch.bmm(torch.softmax(scores, dim=2), self.value(x))
