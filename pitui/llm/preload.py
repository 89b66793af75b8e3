"""Loading what a model's requests need before the first one, off the event loop.

For the four native APIs that is the API's module and httpx (~0.2 s); for litellm's routes it
is litellm itself (seconds, see :mod:`pitui.llm.lazy`). Nothing else imports either ahead.
"""

from __future__ import annotations

import contextlib
import threading

from pitui.llm import apis, lazy
from pitui.llm.routes import Route


def preload(target: Route | None) -> None:
    """Start loading ``target``'s provider code in a background thread (returns at once)."""
    if target is None:
        return
    if not target.native:
        lazy.preload()
        return
    threading.Thread(
        target=_load_quietly, args=(target.api,), name="pitui-provider-import", daemon=True
    ).start()


def _load_quietly(api: str) -> None:
    with contextlib.suppress(Exception):  # the request imports it again and reports errors
        apis.preload(api)


async def ready(target: Route | None) -> None:
    """Return once ``target``'s provider code is imported (imported in a thread if not)."""
    if target is None:
        return
    if target.native:
        await apis.load(target.api)
    else:
        await lazy.litellm_ready()
