"""One session's attachments as the turn uses them: files read into parts (in a worker, each
read once), the model's ability to see images checked, images loaded before a request, and
requests' items in their wire shape."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path

from .. import protocol as p
from ..config import CoreConfig
from ..items import Item, attachment_block
from .errors import AttachmentError
from .parts import Part, describe, display
from .reading import image_attachment, read_attachment
from .store import EXTENSIONS, AttachmentStore
from .vision import VisionCheck
from .wire import image_files, wire_items

_Key = tuple[str, int, int]  # path, size, modification time: the same file unchanged


class SessionAttachments:
    """Reads, stores and sends a session's attachments."""

    def __init__(self, folder: Path, count: Callable[[str], int]) -> None:
        self.store = AttachmentStore(folder)
        self._count = count
        self._vision = VisionCheck()
        self._read: dict[_Key, Part] = {}  # parts read for a chip, reused when sent
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def folder(self) -> Path:
        return self.store.folder

    def tokens(self, part: Part) -> int:
        """What one attachment costs the model."""
        if part.get("kind") == "image":
            return int(part.get("tokens") or 0)
        return self._count(attachment_block(part))

    async def read(self, paths: list[str]) -> list[Part]:
        """The parts for ``paths``, in order; :class:`AttachmentError` naming every file that
        cannot be attached (then nothing is sent)."""
        results = await asyncio.to_thread(self._read_all, paths)
        errors = [r.message for r in results if isinstance(r, AttachmentError)]
        if errors:
            raise AttachmentError(" ".join(errors))
        return [r for r in results if not isinstance(r, AttachmentError)]

    def _read_all(self, paths: list[str]) -> list[Part | AttachmentError]:
        results: list[Part | AttachmentError] = []
        for raw in paths:
            path = Path(raw).expanduser()
            key = _key(path)
            if key is not None and key in self._read:
                results.append(self._read[key])
                continue
            try:
                part = read_attachment(path, self.store)
            except AttachmentError as exc:
                results.append(exc)
                continue
            except MemoryError:
                results.append(AttachmentError(f"{path.name} is too large to read."))
                continue
            if key is not None:
                self._read[key] = part
            results.append(part)
        return results

    async def for_turn(self, paths: list[str], config: CoreConfig) -> list[Part]:
        """The parts of a message's attachments, checked against the model (one that does
        not read images is refused); :class:`AttachmentError` in words otherwise."""
        if not paths:
            return []
        parts = await self.read(paths)
        images = [str(part["name"]) for part in parts if part.get("kind") == "image"]
        refusal = await self._vision.refusal(config, images)
        if refusal is not None:
            raise AttachmentError(refusal)
        return parts

    async def preload(self, items: list[Item]) -> None:
        """Load the images of ``items`` (a resumed session's) off the window's thread; they
        are looked for there too (a 5 000-turn history's items, 3-5 ms before each turn)."""
        await asyncio.to_thread(self._load_images, list(items))

    def _load_images(self, items: list[Item]) -> None:
        wanted = [
            pair for pair in image_files(items) if self.store.data_url(pair[0]) is None
        ]
        if wanted:
            self.store.load(wanted)

    def wire(self, items: list[Item], config: CoreConfig | None = None) -> list[Item]:
        """``items`` as a request to ``config``'s model sends them (see
        :func:`wire.wire_items`): a tool's images as images if it takes them as far as is
        known (see :meth:`tool_images`), else described."""
        images = config is None or self._vision.known(config)
        return wire_items(items, self.store.data_url, images)

    async def tool_images(
        self, tool: str, images: tuple[tuple[str, bytes], ...], config: CoreConfig
    ) -> tuple[list[Part], list[str]]:
        """The parts of the images a tool returned, stored like attachments (scaled for
        sending, read in a worker), and the words for those that cannot be sent; the model's
        server is asked whether it takes images (once), so the request knows."""
        found = await asyncio.to_thread(self._tool_images, tool, images)
        await self._vision.takes_images(config)
        return found

    def _tool_images(
        self, tool: str, images: tuple[tuple[str, bytes], ...]
    ) -> tuple[list[Part], list[str]]:
        parts: list[Part] = []
        problems: list[str] = []
        for n, (mime, data) in enumerate(images, start=1):
            name = f"{tool or 'tool'}-image-{n}.{EXTENSIONS.get(mime, 'img')}"
            try:
                parts.append(image_attachment(data, name, self.store))
            except AttachmentError as exc:
                problems.append(exc.message)
            except (OSError, MemoryError) as exc:
                problems.append(f"{name} could not be kept: {exc}")
        return parts, problems

    def inspect(self, paths: list[str], emit: Callable[[p.Event], None]) -> None:
        """Read ``paths`` in the background and emit what each costs (``AttachmentsInspected``)."""
        task = asyncio.get_running_loop().create_task(self._inspect(paths, emit))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _inspect(self, paths: list[str], emit: Callable[[p.Event], None]) -> None:
        results = await asyncio.to_thread(self._read_all, paths)
        files: list[p.AttachmentInfo] = []
        for raw, result in zip(paths, results, strict=True):
            name = Path(raw).name or raw
            if isinstance(result, AttachmentError):
                files.append(p.AttachmentInfo(path=raw, name=name, error=result.message))
                continue
            tokens = await asyncio.to_thread(self.tokens, result)
            files.append(
                p.AttachmentInfo(
                    path=raw, name=name, kind=str(result["kind"]), size=int(result["size"]),
                    tokens=tokens, description=describe(result),
                    details=display(result, self.folder),
                )
            )
        emit(p.AttachmentsInspected(files=files))


def _key(path: Path) -> _Key | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
