"""Headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``):
no extra Python package, no network port.

Used by the HTML export tests and the export benchmark: load a page, collect script errors,
console errors and network requests, evaluate expressions, take screenshots.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-extensions",
    "--disable-default-apps",
    "--hide-scrollbars",
    "--mute-audio",
    "--force-device-scale-factor=1",
    "--font-render-hinting=none",
]


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class ChromiumError(RuntimeError):
    pass


class Chromium:
    """One headless browser with one page. Use as a context manager."""

    def __init__(self, binary: str, profile: Path, width: int = 1280, height: int = 800) -> None:
        self.binary = binary
        self.profile = profile
        self.width = width
        self.height = height
        self.events: list[dict[str, Any]] = []
        self._next = 0
        self._buffer = b""
        self.session: str | None = None

    def __enter__(self) -> Chromium:
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def arrange() -> None:  # in the child: the protocol's fds 3 (in) and 4 (out)
            read_end, write_end = os.dup(to_child_r), os.dup(from_child_w)
            os.dup2(read_end, 3, inheritable=True)
            os.dup2(write_end, 4, inheritable=True)

        self.proc = subprocess.Popen(
            [
                self.binary,
                *FLAGS,
                f"--user-data-dir={self.profile}",
                f"--window-size={self.width},{self.height}",
                "--remote-debugging-pipe",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=arrange,
            close_fds=False,
        )
        os.close(to_child_r)
        os.close(from_child_w)
        targets = self.call("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.call(
            "Target.attachToTarget", {"targetId": page["targetId"], "flatten": True}
        )["sessionId"]
        for domain in ("Page", "Runtime", "Network", "Log"):
            self.call(f"{domain}.enable")
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {
                "width": self.width,
                "height": self.height,
                "deviceScaleFactor": 1,
                "mobile": False,
            },
        )
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(Exception):
            self.call("Browser.close", session=False, timeout=5)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_child, self._from_child):
            with contextlib.suppress(OSError):
                os.close(fd)

    # ------------------------------------------------------------------ protocol

    def _read_message(self, deadline: float) -> dict[str, Any]:
        import select

        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ChromiumError("Chromium did not answer in time")
            ready, _, _ = select.select([self._from_child], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise ChromiumError("Chromium closed the protocol pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        return message

    def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        session: bool = True,
        timeout: float = 60,
    ) -> dict[str, Any]:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session and self.session is not None:
            message["sessionId"] = self.session
        data = json.dumps(message).encode() + b"\0"
        while data:
            written = os.write(self._to_child, data)
            data = data[written:]
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise ChromiumError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply.get("result", {})
                return result
            if "method" in reply:
                self.events.append(reply)

    def pump(self, seconds: float) -> None:
        """Collect events for a while (a no-op call per round trip)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.call("Runtime.evaluate", {"expression": "0"})
            time.sleep(0.05)

    # ------------------------------------------------------------------ page helpers

    def evaluate(self, expression: str) -> Any:
        reply = self.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in reply:
            raise ChromiumError(f"{expression!r} threw: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def open(
        self,
        url: str,
        ready: str = "document.body && document.body.dataset.ready",
        timeout: float = 60,
    ) -> Any:
        """Navigate and wait until ``ready`` is truthy; returns its value."""
        self.call("Page.navigate", {"url": url})
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                value = self.evaluate(ready)
            except ChromiumError:
                value = None
            if value:
                return value
            time.sleep(0.05)
        raise ChromiumError(f"{url} was not ready after {timeout} s")

    def screenshot(self) -> bytes:
        reply = self.call("Page.captureScreenshot", {"format": "png", "fromSurface": True})
        return base64.b64decode(reply["data"])

    def download(self, click: str, folder: Path, timeout: float = 30) -> Path:
        """Run ``click`` (an expression that starts a download) and wait for the file the
        browser saves in ``folder``; returns its path."""
        folder.mkdir(parents=True, exist_ok=True)
        self.call(
            "Browser.setDownloadBehavior",
            {"behavior": "allow", "downloadPath": str(folder)},
            session=False,
        )
        before = set(folder.iterdir())
        self.evaluate(click)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            done = [p for p in set(folder.iterdir()) - before if not p.name.endswith(".crdownload")]
            if done:
                return done[0]
            self.call("Runtime.evaluate", {"expression": "0"})
            time.sleep(0.05)
        raise ChromiumError("no download arrived in time")

    def emulate_dark(self, dark: bool) -> None:
        """Emulate ``prefers-color-scheme: dark`` (or light)."""
        self.call(
            "Emulation.setEmulatedMedia",
            {"features": [{"name": "prefers-color-scheme", "value": "dark" if dark else "light"}]},
        )

    # ------------------------------------------------------------------ what happened

    def script_errors(self) -> list[str]:
        out = []
        for event in self.events:
            method = event.get("method")
            params = event.get("params", {})
            if method == "Runtime.exceptionThrown":
                out.append(json.dumps(params.get("exceptionDetails", {}))[:2000])
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                out.append(params["entry"].get("text", "")[:2000])
            elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
                out.append(json.dumps(params.get("args", []))[:2000])
        return out

    def requests(self) -> list[str]:
        return [
            e["params"]["request"]["url"]
            for e in self.events
            if e.get("method") == "Network.requestWillBeSent"
        ]
