"""A real Chromium, headless, driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``:
JSON messages ended by a NUL byte on file descriptors 3 and 4), so no websocket library is needed.
``load(url)`` opens a page and returns what a reader's browser would show and do: console errors,
uncaught exceptions, every network request, the page's text and a full-page screenshot."""
from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

CANDIDATES = ("chromium", "chromium-browser", "google-chrome")


def executable() -> str | None:
    return next((shutil.which(c) for c in CANDIDATES if shutil.which(c)), None)


class Chromium:
    def __init__(self, exe: str, timeout: float = 60):
        self.timeout, self._id, self._buf = timeout, 0, b""
        self._profile = tempfile.mkdtemp(prefix="ia-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        flags = ["--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe", "--no-first-run",
                 "--disable-extensions", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-default-apps", f"--user-data-dir={self._profile}", "about:blank"]
        shell = f'exec 3<&{to_child_r} 4>&{from_child_w}; exec "$0" "$@"'
        self.proc = subprocess.Popen(["bash", "-c", shell, exe, *flags], pass_fds=(to_child_r, from_child_w),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_child_r)
        os.close(from_child_w)
        self.events: list[dict] = []

    def _read(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_child], [], [], left)[0]:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed its DevTools pipe")
            self._buf += chunk
        message, self._buf = self._buf.split(b"\0", 1)
        return json.loads(message)

    def send(self, method: str, session: str | None = None, **params) -> dict:
        self._id += 1
        message = {"id": self._id, "method": method, "params": params, **({"sessionId": session} if session else {})}
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]
            self.events.append(reply)

    def wait_for(self, method: str) -> dict:
        deadline = time.monotonic() + self.timeout
        for i, e in enumerate(self.events):
            if e.get("method") == method:
                return e
        while True:
            e = self._read(deadline)
            self.events.append(e)
            if e.get("method") == method:
                return e

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except Exception:
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        for fd in (self._to_child, self._from_child):
            os.close(fd)
        shutil.rmtree(self._profile, ignore_errors=True)


#: What runs off the page: the document wider than the window, and each table or picture wider than
#: the body's content box (a reader would have to scroll sideways to see it).
OVERFLOW = """(() => {
  const body = document.body, width = body.clientWidth, out = [];
  if (document.documentElement.scrollWidth > window.innerWidth) out.push('document ' + document.documentElement.scrollWidth);
  document.querySelectorAll('table, svg').forEach((el, i) => {
    const w = el.getBoundingClientRect().width;
    if (w > width + 1) out.push((el.className.baseVal ?? el.className) + ' #' + i + ' ' + Math.round(w) + ' > ' + width);
  });
  return out;
})()"""


def load(url: str, width: int = 1300, timeout: float = 60) -> dict:
    """{errors, requests, text, svgs, png, overflow}: what the page did and showed once loaded."""
    exe = executable()
    if exe is None:
        raise RuntimeError("no Chromium found (tried " + ", ".join(CANDIDATES) + "): apt-get install chromium")
    browser = Chromium(exe, timeout)
    try:
        target = browser.send("Target.createTarget", url="about:blank")["targetId"]
        session = browser.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            browser.send(f"{domain}.enable", session)
        browser.send("Emulation.setDeviceMetricsOverride", session, width=width, height=900, deviceScaleFactor=1,
                     mobile=False)
        browser.send("Page.navigate", session, url=url)
        browser.wait_for("Page.loadEventFired")
        text = browser.send("Runtime.evaluate", session, expression="document.body.innerText",
                            returnByValue=True)["result"]["value"]
        svgs = browser.send("Runtime.evaluate", session, expression="document.querySelectorAll('svg').length",
                            returnByValue=True)["result"]["value"]
        overflow = browser.send("Runtime.evaluate", session, returnByValue=True, expression=OVERFLOW)["result"]["value"]
        png = base64.b64decode(browser.send("Page.captureScreenshot", session, format="png",
                                            captureBeyondViewport=True)["data"])
        time.sleep(0.5)  # late console messages and requests
        browser.send("Runtime.evaluate", session, expression="1")
    finally:
        browser.close()
    errors, requests = [], []
    for e in browser.events:
        method, params = e.get("method"), e.get("params", {})
        if method == "Runtime.exceptionThrown":
            errors.append(params["exceptionDetails"].get("text", "exception"))
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            errors.append(" ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            errors.append(params["entry"]["text"])
        elif method == "Network.requestWillBeSent":
            requests.append(params["request"]["url"])
    return {"errors": errors, "requests": requests, "text": text, "svgs": svgs, "png": png, "overflow": overflow}
