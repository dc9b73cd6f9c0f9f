"""A minimal Chrome DevTools Protocol client over ``--remote-debugging-pipe`` (stdlib only: the
browser reads NUL-terminated JSON commands on fd 3 and writes replies and events on fd 4), enough
to drive Debian's headless Chromium from pytest: navigate, evaluate, screenshot.  Plus a PNG
decoder (stdlib zlib) to check a screenshot is not blank."""

from __future__ import annotations

import base64
import json
import os
import shutil
import struct
import subprocess
import time
import zlib
from pathlib import Path
from typing import Any


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    return None


class Browser:
    def __init__(self, exe: str, profile: Path, size: tuple[int, int] = (1280, 900), args: tuple[str, ...] = ()):
        import fcntl

        r0, self._w = os.pipe()  # commands: our _w -> the browser's fd 3
        self._r, w0 = os.pipe()  # replies: the browser's fd 4 -> our _r
        # out of the way of 3 and 4 first, then the child moves them there
        to_child_r = fcntl.fcntl(r0, fcntl.F_DUPFD, 10)
        from_child_w = fcntl.fcntl(w0, fcntl.F_DUPFD, 10)
        os.close(r0)
        os.close(w0)

        def fds() -> None:
            os.dup2(to_child_r, 3)
            os.dup2(from_child_w, 4)

        self.proc = subprocess.Popen(
            [
                exe,
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--remote-debugging-pipe",
                f"--user-data-dir={profile}",
                f"--window-size={size[0]},{size[1]}",
                *args,
                "about:blank",
            ],
            pass_fds=(3, 4),
            preexec_fn=fds,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._id = 0
        self.session: str | None = None

    def _recv(self, timeout: float) -> dict[str, Any]:
        import select

        end = time.monotonic() + timeout
        while b"\0" not in self._buf:
            left = end - time.monotonic()
            if left <= 0:
                raise TimeoutError("no message from the browser")
            ready, _, _ = select.select([self._r], [], [], left)
            if ready:
                chunk = os.read(self._r, 1 << 20)
                if not chunk:
                    raise EOFError("the browser closed its pipe")
                self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return dict(json.loads(msg))

    def call(self, method: str, timeout: float = 30, **params: Any) -> dict[str, Any]:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params}
        if self.session and not method.startswith("Target."):
            msg["sessionId"] = self.session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        while True:
            r = self._recv(timeout)
            if r.get("id") == self._id:
                if "error" in r:
                    raise RuntimeError(f"{method}: {r['error']}")
                return dict(r.get("result", {}))

    def attach(self) -> None:
        targets = self.call("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"], flatten=True)["sessionId"]
        self.call("Page.enable")
        self.call("Runtime.enable")

    def eval(self, js: str) -> Any:
        r = self.call("Runtime.evaluate", expression=js, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"{js!r}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def navigate(self, url: str) -> None:
        self.call("Page.navigate", url=url)
        self.wait("document.readyState === 'complete' && location.href.startsWith(" + json.dumps(url) + ")")

    def wait(self, js: str, timeout: float = 20) -> Any:
        end = time.monotonic() + timeout
        while True:
            try:
                v = self.eval(js)
            except RuntimeError:
                v = None
            if v:
                return v
            if time.monotonic() > end:
                raise TimeoutError(f"waited {timeout} s for {js}")
            time.sleep(0.1)

    def screenshot(self, full: bool = False) -> bytes:
        """The viewport as PNG, or (``full``) the whole page's height at the viewport's width."""
        params: dict[str, Any] = {"format": "png"}
        if full:
            w = int(self.eval("document.documentElement.clientWidth"))
            h = int(self.eval("document.documentElement.scrollHeight"))
            params.update(captureBeyondViewport=True, clip={"x": 0, "y": 0, "width": w, "height": h, "scale": 1})
        return base64.b64decode(self.call("Page.captureScreenshot", **params)["data"])

    def viewport(self, width: int, height: int) -> None:
        """Lay the page out at width x height (an LCD's 1920 x 1080, say)."""
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)

    def close(self) -> None:
        try:
            self.call("Browser.close", timeout=5)
        except Exception:  # noqa: BLE001 - closing anyway
            pass
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        for fd in (self._r, self._w):
            try:
                os.close(fd)
            except OSError:
                pass


def png_luma(png: bytes) -> tuple[int, int, list[int]]:
    """(width, height, luma per pixel) of an 8-bit RGB/RGBA PNG (what Chromium writes)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    h = ctype = 0
    while pos < len(png):
        (n,) = struct.unpack(">I", png[pos : pos + 4])
        kind, data = png[pos + 4 : pos + 8], png[pos + 8 : pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", data[:10])
            assert depth == 8 and ctype in (2, 6), f"PNG depth {depth} colour type {ctype}"
        elif kind == b"IDAT":
            idat += data
        pos += 12 + n
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    luma: list[int] = []
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        luma += [(299 * line[i] + 587 * line[i + 1] + 114 * line[i + 2]) // 1000 for i in range(0, stride, bpp)]
        prev = line
    return w, h, luma
