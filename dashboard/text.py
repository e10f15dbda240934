"""User-provided text shown as text: workspace, model, file and column names, notes, ids and
URL values are typed by one user and read by others, so none of them may become a link, an
image, a heading, LaTeX or a coloured directive in the app's Markdown.

Streamlit renders Markdown (GitHub-flavoured, with its own ``:material/…:`` icons, ``:red[…]``
colours and ``$…$`` LaTeX) in titles, captions, alerts, labels and help texts; :func:`plain`
escapes every ASCII punctuation character with a backslash (CommonMark's escape: shown as the
character itself, never as markup) and breaks the bare-URL and ``www.`` autolinks."""

from __future__ import annotations

import string

_ESCAPED = {ord(c): "\\" + c for c in string.punctuation}


def plain(value: object) -> str:
    """``value`` as text that Markdown shows exactly as typed (its lines kept as line breaks).

    >>> plain("[link](https://x.org)")
    '\\\\[link\\\\]\\\\(https\\\\:\\\\/\\\\/x\\\\.org\\\\)'
    """
    lines = (" ".join(line.split()).translate(_ESCAPED) for line in str(value).splitlines())
    return "  \n".join(line for line in lines if line)
