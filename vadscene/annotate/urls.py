"""The URL paths under which the app serves a workspace's videos and filmstrips.

Apart from the routes themselves (:mod:`vadscene.annotate.serving`) so that what only builds a
link (the Annotate page, Label Studio tasks) needs no web framework.
"""

from __future__ import annotations

from urllib.parse import quote, unquote

VIDEO_ROUTE = "/vadscene/video/{video_id}"
"""The endpoint's path; user routes of ``st.App`` sit at the root, beside Streamlit's own."""


def video_url(video_id: str) -> str:
    """The URL path of a video, every reserved character quoted.

    Benchmark ids contain characters that mean something in a URL (XD-Violence's
    ``Thelma...Louise.1991__#01-53-54_01-54-50_label_A`` has a ``#``), so nothing is left
    unquoted; the server decodes the path once and gets the id back.
    """
    return VIDEO_ROUTE.replace("{video_id}", quote(video_id, safe=""))


FILMSTRIP_ROUTE = "/vadscene/filmstrip/{video_id}"
"""The filmstrip of a video (:mod:`vadscene.video.thumbnails`), a JPEG made on first request."""


def filmstrip_url(video_id: str) -> str:
    """The URL path of a video's filmstrip, quoted like :func:`video_url`."""
    return FILMSTRIP_ROUTE.replace("{video_id}", quote(video_id, safe=""))


def is_safe_video_id(video_id: str) -> bool:
    """Whether ``video_id`` may be looked up: no path syntax in it, however often decoded.

    Refused: ``/`` and ``\\`` (an id is a file stem, never a path, which also rules out
    absolute paths), control characters such as NUL, ids made only of dots (``.``, ``..``),
    and ids that percent-decode — once or repeatedly — into any of these
    (``%2e%2e%2f``, ``%252e%252e%252f``), so that no layer that decodes once more can turn an
    id into a path. Dots inside an id are allowed: ``Thelma...Louise.1991__…`` is a real
    XD-Violence id and, without separators, cannot climb out of a folder. The lookup by id
    would not resolve any of the refused ids anyway; refusing them early keeps them out of
    the store query and out of error messages.
    """
    form = video_id
    while True:
        if not form.strip(".") or any(ch in "/\\" or not ch.isprintable() for ch in form):
            return False
        decoded = unquote(form)
        if decoded == form:
            return True
        form = decoded  # strictly shorter each round, so the loop ends
