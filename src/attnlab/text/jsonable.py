"""attnlab's numbers as JSON: nested lists, −∞/+∞/NaN as strings, rows kept on one line.

No torch at import: tensors are recognised by their methods, so the scripts' argument parsing and
the store can use this module before torch loads.
"""

from __future__ import annotations

import json
import math
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from torch import Tensor

_INNER_LIST = re.compile(r"\[\s*([^\[\]{}]*?)\s*\]", re.S)

Json = Any


def to_json(t: Tensor | list[Any] | float, decimals: int | None = None) -> Json:
    """Nested lists of numbers (rounded to ``decimals`` when given); −∞/+∞/NaN become the
    strings "-inf", "inf", "nan". The one JSON encoder of attnlab's numbers."""
    if not isinstance(t, list | float | int):  # a torch.Tensor, recognised without importing torch
        if str(t.dtype) == "torch.bool":
            return t.tolist()
        return to_json(t.tolist() if t.dim() else float(t.item()), decimals)
    if isinstance(t, list):
        return [to_json(v, decimals) for v in t]
    if math.isinf(t):
        return "-inf" if t < 0 else "inf"
    if math.isnan(t):
        return "nan"
    return t if decimals is None else round(t, decimals)


def dumps(doc: Json) -> str:
    """JSON text with each innermost list on one line (readable rows, exact numbers)."""
    text = json.dumps(doc, ensure_ascii=False, indent=1)
    return _INNER_LIST.sub(lambda m: "[" + " ".join(m.group(1).split()) + "]", text)
