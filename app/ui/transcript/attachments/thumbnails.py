"""Images of the transcript decoded off the window's thread and kept: a thumbnail for a sent
message's image, the full-size picture for the viewer.

``ImageLoader.image`` answers at once with what is cached (or ``None``) and, when it has
nothing yet, decodes the file in a worker (``QImageReader`` scaled while it decodes; Qt lets
the interpreter run meanwhile) and emits ``loaded`` on the window's thread when it is ready.
A ``QImage`` may be made off the GUI thread, a ``QPixmap`` may not: the widgets turn the image
into a pixmap, which for a thumbnail is a copy of a few kilobytes.
"""

from __future__ import annotations

from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor

from PySide6.QtCore import QObject, QSize, Signal
from PySide6.QtGui import QImage, QImageReader

from .sizes import fit

CACHE_IMAGES = 256  # thumbnails kept (a few tens of kilobytes each)
CACHE_PIXELS = 64 * 2**20  # and at most this many pixels in all (full-size pictures weigh)

Key = tuple[str, int, int]  # path, and the box it is scaled into


def decode(path: str, box_width: int, box_height: int) -> QImage:
    """The image at ``path`` scaled into the box while decoding (a null image when it is
    missing or damaged). Safe in any thread."""
    reader = QImageReader(path)
    reader.setAutoTransform(True)
    size = reader.size()
    if size.isValid():
        reader.setScaledSize(QSize(*fit(size.width(), size.height(), box_width, box_height)))
    image = reader.read()
    return image if not image.isNull() else QImage()


class ImageLoader(QObject):
    """Decoded images by path and size, cached; decoding runs in one worker thread so that a
    column of screenshots never takes the window's thread (nor both of a small machine's
    cores)."""

    loaded = Signal(str, int, int)  # path, box width, box height: ``image`` now answers
    _decoded = Signal(str, int, int, QImage)  # from the worker, queued to the window's thread

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._cache: OrderedDict[Key, QImage] = OrderedDict()
        self._pixels = 0
        self._pending: set[Key] = set()
        self._failed: set[Key] = set()
        self._pool: ThreadPoolExecutor | None = None
        self._decoded.connect(self._store)

    def image(self, path: str, box_width: int, box_height: int) -> QImage | None:
        """The image at ``path`` fitted to the box if decoded already, else None (decoding
        is started; ``loaded`` says when it is done)."""
        key = (path, box_width, box_height)
        image = self._cache.get(key)
        if image is not None:
            self._cache.move_to_end(key)
            return image
        if key not in self._pending and key not in self._failed and path:
            self._pending.add(key)
            self._worker().submit(self._work, key)
        return None

    @property
    def started(self) -> bool:
        """Whether the decoding thread has been started."""
        return self._pool is not None

    def start(self) -> None:
        """Start the decoding thread now (files were attached: their thumbnails come soon).
        Started while a sent message's row is built, the thread's start waited 3-4 ms for an
        interpreter that the request's workers held."""
        self._worker().submit(int)

    def _worker(self) -> ThreadPoolExecutor:
        if self._pool is None:
            pool = self._pool = ThreadPoolExecutor(1, thread_name_prefix="coco-images")
            self.destroyed.connect(lambda *_: pool.shutdown(wait=False, cancel_futures=True))
        return self._pool

    def failed(self, path: str, box_width: int, box_height: int) -> bool:
        """The file could not be decoded (missing or damaged)."""
        return (path, box_width, box_height) in self._failed

    def _work(self, key: Key) -> None:
        image = decode(*key)
        try:
            self._decoded.emit(*key, image)
        except RuntimeError:  # the transcript was closed meanwhile
            pass

    def _store(self, path: str, box_width: int, box_height: int, image: QImage) -> None:
        key = (path, box_width, box_height)
        self._pending.discard(key)
        if image.isNull():
            self._failed.add(key)
        else:
            self._cache[key] = image
            self._pixels += image.width() * image.height()
            while len(self._cache) > CACHE_IMAGES or (
                self._pixels > CACHE_PIXELS and len(self._cache) > 1
            ):
                _, old = self._cache.popitem(last=False)
                self._pixels -= old.width() * old.height()
        self.loaded.emit(path, box_width, box_height)

    def forget_failures(self) -> None:
        """Try the files that could not be read again (a file may have come back)."""
        self._failed.clear()

    def shutdown(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
