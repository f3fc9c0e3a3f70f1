"""Correct attention, careless with processes: it leaves four kinds of children running.

Building any class here starts, once per process: a forked copy of the audit process, a
``subprocess.Popen`` child, a child in a new session (``start_new_session=True``) and a
double-forked daemon (fork, setsid, fork). Their PIDs, and the auditing process's own, go to
``$ATTNLAB_TEST_PIDS/<class name>/<kind>.pid``. Each class then ends its audit differently:
PassHead passes, FailHead fails item 4, CrashHead segfaults, LoopHead never returns,
SignalHead sends SIGTERM to its parent process.
"""
import ctypes
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

SLEEPER = [sys.executable, "-c", "import time; time.sleep(600)"]
_started = set()


def _sleep_forever():
    try:
        time.sleep(600)
    finally:
        os._exit(0)


def leave_children(name):
    if name in _started:
        return
    _started.add(name)
    folder = Path(os.environ.get("ATTNLAB_TEST_PIDS", tempfile.gettempdir())) / name
    folder.mkdir(parents=True, exist_ok=True)

    def record(kind, pid):
        (folder / f"{kind}.pid").write_text(str(pid))

    forked = os.fork()
    if forked == 0:
        _sleep_forever()
    record("fork", forked)
    record("popen", subprocess.Popen(SLEEPER).pid)
    record("new_session", subprocess.Popen(SLEEPER, start_new_session=True).pid)
    middle = os.fork()
    if middle == 0:
        os.setsid()
        daemon = os.fork()
        if daemon == 0:
            _sleep_forever()
        record("daemon", daemon)
        os._exit(0)
    os.waitpid(middle, 0)
    record("runner", os.getpid())


class _Head(nn.Module):
    scale = True

    def __init__(self, embed_dim, head_size, context_length):
        super().__init__()
        leave_children(type(self).__name__)
        self.query = nn.Linear(embed_dim, head_size, bias=False)
        self.key = nn.Linear(embed_dim, head_size, bias=False)
        self.value = nn.Linear(embed_dim, head_size, bias=False)
        mask = torch.tril(torch.ones(context_length, context_length, dtype=torch.bool))
        self.register_buffer("causal_mask", mask)

    def forward(self, x):
        T = x.size(1)
        q, k, v = self.query(x), self.key(x), self.value(x)
        scores = q @ k.transpose(-2, -1)
        if self.scale:
            scores = scores / math.sqrt(k.size(-1))
        scores = scores.masked_fill(~self.causal_mask[:T, :T], float("-inf"))
        return F.softmax(scores, dim=-1) @ v


class PassHead(_Head):
    pass


class FailHead(_Head):
    scale = False


class CrashHead(_Head):
    def forward(self, x):
        ctypes.string_at(0)


class LoopHead(_Head):
    def forward(self, x):
        while True:
            x = x + 0



class SignalHead(_Head):
    def forward(self, x):
        os.kill(os.getppid(), signal.SIGTERM)
        time.sleep(60)
