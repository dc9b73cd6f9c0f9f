"""The floor view's and the sign's pages (controller/lap/web/): plain HTML, CSS and JavaScript files
shipped in the package (no framework, no build step, nothing fetched at install or at run time).
The pages load only these files (the server's Content-Security-Policy forbids anything else, inline
script included); the page's script puts every value in with ``textContent``, never as markup.

Templates: the login page's ``@MSG`` (the refusal, escaped here), the floor page's ``@WHO`` and
``@CSRF`` (the session's person and CSRF token, escaped here).
"""

from __future__ import annotations

from importlib.resources import files

_WEB = files("controller.lap").joinpath("web")


def _read(name: str) -> bytes:
    return _WEB.joinpath(name).read_bytes()


LOGIN_PAGE = _read("login.html").decode()
PAGE = _read("floor.html").decode()
SIGN_PAGE = _read("sign.html").decode()

#: what ``/static/NAME`` serves: (content type, body)
STATIC: dict[str, tuple[str, bytes]] = {
    "floor.css": ("text/css", _read("floor.css")),
    "floor.js": ("text/javascript", _read("floor.js")),
    "sign.css": ("text/css", _read("sign.css")),
    "sign.js": ("text/javascript", _read("sign.js")),
}


def esc(s: str) -> str:
    return (
        s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;").replace("'", "&#39;")
    )
