"""TeX math ($…$, $$…$$) typeset offline with matplotlib's mathtext, as images a QTextDocument can show.

A formula becomes ``<img src="precis-math:N">``; ``SafeTextDocument.loadResource`` answers that scheme (and
only that one) from here. Images are cached by (source, colour, size, display), so re-rendering a streaming
reply's last block costs a dict lookup for every formula already seen. What mathtext cannot parse, or a formula
too long to be one, is shown as its source in monospace, never as an error.

matplotlib (with numpy) costs ~60 MB and about half a second (more on a cold disk) to import: ``warm_in_background`` loads it
in a worker thread after the window's first paint, and until it is loaded a formula is shown as its source
rather than stalling the UI thread; ``notifier().ready`` tells the views to render again once it is. (Blocking
the paint instead would freeze a window whose first chat has a formula for that half second.)
"""

from __future__ import annotations

import html
import io
import re
import threading
from collections import OrderedDict

from msgspec import Struct
from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtGui import QFont, QFontMetricsF, QGuiApplication, QImage, QPainter

from desktop.ui.window.reading_column import BODY_PX

MATH_SCHEME = "precis-math"
MAX_SOURCE = 2_000  # longer "formulas" are almost always a stray dollar sign pairing far apart
CACHE_LIMIT = 500  # typeset images kept (each a few tens of KB)
OVERSAMPLE = 2.0  # rendered at twice the pixels it is shown at, so it stays sharp on HiDPI screens
BASE_DPI = 96.0  # mathtext's points become pixels at this many dots per inch (the image is shown 1:1)
# Operator names mathtext sets without the thin space TeX puts before them after a letter, a digit or a bracket
# ("n\\log n" came out as "nlog n").
_OPERATOR = re.compile(
    r"\\(arccos|arcsin|arctan|arg|cosh|cos|coth|cot|csc|deg|det|dim|exp|gcd|hom|inf|ker|lg|liminf|limsup|lim|ln|"
    r"log|max|min|Pr|sec|sinh|sin|sup|tanh|tan)(?![A-Za-z])"
)
_CONTROL_WORD_END = re.compile(r"\\[A-Za-z]+$")


class Formula(Struct, frozen=True):
    """A rendered formula: its TeX source and image."""

    source: str  # the TeX between the dollars, what a copy of the image gives
    image: QImage
    width: float  # logical pixels
    height: float


Key = tuple[str, str, float, bool]  # source, colour, point size, display
_lock = threading.Lock()
_numbers: dict[Key, int] = {}
_keys: list[Key] = []  # number -> key, kept for the whole run (small): an evicted image can be made again
_images: OrderedDict[int, Formula] = OrderedDict()  # the typeset images, least recently used first


_loaded = threading.Event()  # matplotlib's mathtext is imported and has typeset once
_warming: threading.Thread | None = None
_fell_back = False  # a formula was shown as its source while matplotlib loaded: the views render again


class _Notifier(QObject):
    """Lives on the UI thread: the loading thread emits ``_done``, which reaches ``ready`` on the UI thread."""

    ready = Signal()
    _done = Signal()

    def __init__(self) -> None:
        super().__init__()
        self._done.connect(self._relay)

    @Slot()
    def _relay(self) -> None:
        global _fell_back
        if _fell_back:
            _fell_back = False
            self.ready.emit()


_notifier: _Notifier | None = None


def notifier() -> _Notifier:
    """Its ``ready`` signal fires (on the UI thread) once formulas typeset, if one was shown as its source."""
    global _notifier
    if _notifier is None:
        _notifier = _Notifier()
    return _notifier


def is_ready() -> bool:
    return _loaded.is_set()


def load_now() -> None:
    """Import matplotlib's mathtext and typeset once (its parser and fonts are built on first use)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib import mathtext

    mathtext.math_to_image("$x$", io.BytesIO(), dpi=96.0, format="png")
    _loaded.set()


def warm_in_background() -> None:
    """Load matplotlib in a worker thread (once); call it on the UI thread, after the first paint."""
    global _warming
    box = notifier()  # made here, on the UI thread, so its relay runs there
    if _warming is not None or _loaded.is_set():
        return

    def load() -> None:
        try:
            load_now()
        except Exception:  # noqa: BLE001 - no matplotlib: every formula stays its source
            return
        box._done.emit()

    # Not a daemon: quitting mid-import would tear the interpreter down under it; the exit waits for it instead.
    _warming = threading.Thread(target=load, name="precis-math-warm")
    _warming.start()


def _typeset(key: Key) -> Formula | None:
    import matplotlib  # loaded by load_now before any formula gets a number
    from matplotlib import mathtext
    from matplotlib.font_manager import FontProperties

    source, colour, point_size, display = key
    prop = FontProperties(size=point_size * (1.15 if display else 1.0))
    buf = io.BytesIO()
    dpi = BASE_DPI * OVERSAMPLE
    try:
        with matplotlib.rc_context({"savefig.transparent": True}):  # the bubble's colour shows through
            depth = mathtext.math_to_image(
                f"${spaced(source)}$", buf, prop=prop, dpi=dpi, format="png", color=colour
            )
    except Exception:  # mathtext raises ValueError for what it cannot parse; any failure shows the source
        return None
    image = QImage.fromData(buf.getvalue())
    if image.isNull():
        return None
    if not display:
        lift = round(_x_height(point_size) * OVERSAMPLE)
        image = _on_the_baseline(image, round(float(depth or 0.0) * dpi / 72.0), lift)
    return Formula(source, image, image.width() / OVERSAMPLE, image.height() / OVERSAMPLE)


def spaced(source: str) -> str:
    """TeX's thin space before an operator name that follows a letter, a digit or a closing bracket (spaces in the
    source do not count, as in TeX; a command such as \\cdot before it is left alone)."""
    out: list[str] = []
    done = 0
    for found in _OPERATOR.finditer(source):
        before = source[: found.start()].rstrip()
        last = before[-1:]
        if (last.isalnum() and not _CONTROL_WORD_END.search(before)) or (last and last in ")]}"):
            out.append(source[done : found.start()] + "\\,")
            done = found.start()
    return "".join(out) + source[done:]


def _x_height(point_size: float) -> float:
    """The x-height, in pixels, of the body font at ``point_size`` mathtext points."""
    font = QGuiApplication.font() if QGuiApplication.instance() is not None else QFont()
    font.setPixelSize(max(1, round(point_size * BASE_DPI / 72.0)))
    return QFontMetricsF(font).xHeight()


def _on_the_baseline(image: QImage, depth: int, lift: int) -> QImage:
    """The image padded (transparent) so that, shown "middle"-aligned, the formula's baseline is the text's.

    Qt centres a "middle" inline image an x-height's half above the baseline, on the middle of the lowercase
    letters (measured: its ascent is (height + x-height) / 2); mathtext's image has its baseline ``depth`` pixels
    above its foot. Padded so the part above the baseline is ``lift`` (an x-height) taller than the part below,
    the two baselines meet: centred on its own middle, the formula sat half below the line (and, in a table
    cell, off the cell's text)."""
    depth = max(0, min(depth, image.height()))
    above = image.height() - depth
    top, below = max(above, depth + lift), max(depth, above - lift)
    if (top, below) == (above, depth):
        return image
    padded = QImage(image.width(), top + below, QImage.Format.Format_ARGB32_Premultiplied)
    padded.fill(Qt.GlobalColor.transparent)
    painter = QPainter(padded)
    painter.drawImage(0, top - above, image)
    painter.end()
    return padded


def formula(number: int) -> Formula | None:
    """The typeset formula ``number`` (made again if its image was evicted); None if it does not typeset."""
    with _lock:
        if not 0 <= number < len(_keys):
            return None
        made = _images.get(number)
        if made is not None:
            _images.move_to_end(number)
            return made
        key = _keys[number]
    made = _typeset(key)
    if made is not None:
        with _lock:
            _images[number] = made
            while len(_images) > CACHE_LIMIT:
                _images.popitem(last=False)
    return made


def formula_for_url(url: str) -> Formula | None:
    """The formula behind ``precis-math:N`` (None for anything else)."""
    scheme, sep, rest = url.partition(":")
    return formula(int(rest)) if sep and scheme == MATH_SCHEME and rest.isdigit() else None


def _number(key: Key) -> int | None:
    with _lock:
        number = _numbers.get(key)
        if number is not None:
            return number if number >= 0 else None
        number = _numbers[key] = len(_keys)
        _keys.append(key)
    if formula(number) is None:
        with _lock:
            _numbers[key] = -1  # remembered: a formula mathtext refused is not tried again
        return None
    return number


def _default_point_size() -> float:
    """The transcript's body size, in mathtext's points: a formula's letters as tall as the text beside them (it
    was typeset at the desktop's 9 pt, 10-11 px beside 15 px prose)."""
    return BODY_PX * 72.0 / BASE_DPI


def math_html(
    source: str, display: bool, colour: str, mono_family: str, point_size: float | None = None
) -> str:
    """One formula as Qt rich text: an image when mathtext typesets it, else its source in monospace (also while
    matplotlib is still loading: the views render again when it is ready)."""
    global _fell_back
    source = source.strip()
    number = None
    if source and not _loaded.is_set():
        _fell_back = True
        warm_in_background()
    elif source and len(source) <= MAX_SOURCE:
        number = _number((source, colour, point_size or _default_point_size(), display))
    made = formula(number) if number is not None else None
    if made is None:
        code = f'<code style="font-family:{mono_family}">{html.escape(source)}</code>'
        return f'<p align="center">{code}</p>\n' if display else code
    img = (
        f'<img src="{MATH_SCHEME}:{number}" alt="{html.escape(source, quote=True)}" '
        f'width="{round(made.width)}" height="{round(made.height)}" style="vertical-align:middle">'
    )
    return f'<p align="center">{img}</p>\n' if display else img
