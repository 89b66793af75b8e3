"""Importing litellm the safe way: offline cost map, no debug prints, imported once, on demand."""

from __future__ import annotations

import os
import threading
from typing import Any

_lock = threading.Lock()
_module: Any = None


def litellm() -> Any:
    """The litellm module, configured for a TUI: no network fetch at import, no stdout noise."""
    global _module
    if _module is not None:
        return _module
    with _lock:
        if _module is None:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            os.environ.setdefault("LITELLM_LOG", "ERROR")
            import litellm as module

            module.suppress_debug_info = True
            module.drop_params = True
            module.telemetry = False
            _module = module
    return _module
