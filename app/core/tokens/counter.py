"""Token counting: a byte estimate everywhere, exact tiktoken counts once the encoding has loaded.

The estimate (``ceil(utf-8 bytes / 4)``, :mod:`.token_estimate`) is the rule the compaction
algorithm is specified in, so budgets and truncation use it. ``TokenCounter`` is for the context
gauge: it answers at once with the estimate and switches to exact counts when its encoding is
ready; loading happens in a background thread and never holds up the caller (the UI thread
included).

The BPE files of the encodings Coco uses ship inside the package (``app/core/tokens/data/tiktoken``, in
the wheel and the bundle), so counts are exact with no network: that file is read first, its
checksum checked. Only when it is missing or damaged is the cache folder looked at, or the file
downloaded (:mod:`.tokenizer_files`); Coco builds the ``Encoding`` from the file itself.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import tiktoken

from ..items import Item, item_count_parts
from ..system.dirs import default_cache_dir
from .estimate import (
    ITEM_OVERHEAD_TOKENS,
    approx_tokens,
    item_tokens,
    truncate_middle,
)
from .text_key import TextKey
from .tiktoken_counts import _count_in_steps, _report_from, sampled_estimate
from .tokenizer_files import (
    _ENCODING_SPECS,
    _download_bpe,
    _EncodingSpec,
    _parse_bpe,
    _read_cached_bpe,
    _read_checked_bpe,
    encoding_name_for_model,
    tokenizer_cache_dir,
)

__all__ = [
    "BIG_TEXT_CHARS",
    "HUGE_TEXT_CHARS",
    "ITEM_OVERHEAD_TOKENS",
    "PACKAGED_TOKENIZER_DIR",
    "CounterState",
    "TokenCounter",
    "approx_tokens",
    "default_cache_dir",
    "encoding_name_for_model",
    "item_tokens",
    "sampled_estimate",
    "tokenizer_cache_dir",
    "truncate_middle",
]

log = logging.getLogger(__name__)

CounterState = Literal["loading", "ready", "unavailable"]

# Texts this long are counted in a worker thread before the core needs their count
# (:meth:`TokenCounter.precount`): tokenising a 1 MB reply takes 0.2–0.6 s, and the core's loop
# is the window's thread (qasync). Their counts are kept for the next use of the same text.
BIG_TEXT_CHARS = 20_000
_BIG_COUNTS_KEPT = 64
# Texts this long (a pasted log, a runaway reply) are not counted exactly where a count is
# needed at once (opening a session, the gauge): counting 50 MB takes seconds. They get an
# estimate from a few exactly counted samples, marked approximate, and their exact count is
# made in a worker thread afterwards (:meth:`TokenCounter.refine`); a decision that needs it
# (a turn, a compaction) waits for that.
HUGE_TEXT_CHARS = 1_000_000
_HUGE_COUNTS_KEPT = 16


# Where the shipped BPE files are: ``<encoding name>.tiktoken`` (package data, see pyproject.toml
# and packaging/coco.spec).
PACKAGED_TOKENIZER_DIR = Path(__file__).parent / "data" / "tiktoken"


def _read_packaged_bpe(spec: _EncodingSpec) -> bytes | None:
    return _read_checked_bpe(spec, PACKAGED_TOKENIZER_DIR / f"{spec.name}.tiktoken")


def _load_encoding(spec: _EncodingSpec, folder: Path, allow_download: bool) -> tiktoken.Encoding:
    data = _read_packaged_bpe(spec) or _read_cached_bpe(spec, folder)
    if data is None:
        if not allow_download:
            raise FileNotFoundError(f"no {spec.name} tokenizer file in {folder}")
        data = _download_bpe(spec, folder)
    import tiktoken  # here, on the loading thread: the window needs none of it to open

    return tiktoken.Encoding(
        spec.name,
        pat_str=spec.pat_str,
        mergeable_ranks=_parse_bpe(data),
        special_tokens=spec.special_tokens,
    )


class _Load:
    """One background load; counters waiting for the same file share it."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.encoding: tiktoken.Encoding | None = None


_LoadKey = tuple[str, str, bool]


class _SharedEncodings:
    """Process-wide encodings, keyed by encoding name, and the loads in flight."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.ready: dict[str, tiktoken.Encoding] = {}
        self.loading: dict[_LoadKey, _Load] = {}
        # A download that failed (no network) is not tried again in this run: each session
        # opened would otherwise wait on it anew. The cached file is still looked for.
        self.download_failed = False

    def get_or_start(
        self, spec: _EncodingSpec, folder: Path, allow_download: bool
    ) -> tiktoken.Encoding | _Load:
        """The loaded encoding, or the (possibly just started) load that will produce it."""
        with self.lock:
            allow_download = allow_download and not self.download_failed
            key: _LoadKey = (spec.name, str(folder), allow_download)
            encoding = self.ready.get(spec.name)
            if encoding is not None:
                return encoding
            load = self.loading.get(key)
            if load is not None:
                return load
            load = self.loading[key] = _Load()
        thread = threading.Thread(
            target=self._run,
            args=(key, load, spec, folder, allow_download),
            name=f"tiktoken-load-{spec.name}",
            daemon=True,  # a hung download must never keep the app from exiting
        )
        thread.start()
        return load

    def _run(
        self, key: _LoadKey, load: _Load, spec: _EncodingSpec, folder: Path, allow_download: bool
    ) -> None:
        try:
            encoding: tiktoken.Encoding | None = _load_encoding(spec, folder, allow_download)
        except Exception as exc:  # noqa: BLE001 - any failure just means "estimate instead"
            log.info("exact token counts unavailable (%s): %s", spec.name, exc)
            encoding = None
            if allow_download and isinstance(exc, OSError):  # no network (URLError is one)
                self.download_failed = True
        with self.lock:
            if encoding is not None:
                self.ready.setdefault(spec.name, encoding)
            # A failed load is forgotten so a later counter may retry (the file may appear).
            self.loading.pop(key, None)
            load.encoding = encoding
        load.done.set()


_SHARED = _SharedEncodings()


class TokenCounter:
    """Counts tokens for one model: estimates at once, exact counts once tiktoken is loaded.

    The constructor never blocks: the encoding loads in a daemon thread (shared by every counter
    in the process that needs the same encoding).
    """

    def __init__(
        self, model: str, cache_dir: Path | None = None, allow_download: bool = True
    ) -> None:
        self.encoding_name = encoding_name_for_model(model)
        spec = _ENCODING_SPECS[self.encoding_name]
        self._shared = _SHARED
        got = self._shared.get_or_start(spec, tokenizer_cache_dir(cache_dir), allow_download)
        self._encoder: tiktoken.Encoding | None = None
        self._load: _Load | None = None
        self._big_counts: OrderedDict[str, int] = OrderedDict()  # see BIG_TEXT_CHARS
        # See HUGE_TEXT_CHARS: exact counts made by ``refine``, and estimates awaiting one,
        # by ``TextKey`` (hashing the whole of a 50 MB text blocked every thread 10-15 ms).
        self._huge_counts: OrderedDict[TextKey, int] = OrderedDict()
        self._estimated: dict[TextKey, int] = {}
        # Called when :meth:`count` gave a huge text an estimate (on the thread that asked:
        # the event loop's in the core), so the owner schedules :meth:`refine`.
        self.on_estimate: Callable[[], None] | None = None
        if isinstance(got, _Load):
            self._load = got
        else:
            self._encoder = got

    def _current_encoder(self) -> tiktoken.Encoding | None:
        if self._encoder is None and self._load is not None and self._load.done.is_set():
            # A failed load still upgrades if another counter has since loaded the encoding.
            self._encoder = self._load.encoding or self._shared.ready.get(self.encoding_name)
        return self._encoder

    @property
    def exact(self) -> bool:
        """True once counts come from the real tokenizer."""
        return self._current_encoder() is not None

    @property
    def state(self) -> CounterState:
        """``"loading"``, ``"ready"`` or ``"unavailable"`` (estimates only, for good)."""
        if self._current_encoder() is not None:
            return "ready"
        if self._load is not None and not self._load.done.is_set():
            return "loading"
        return "unavailable"

    def wait_ready(self, timeout: float) -> bool:
        """Block up to ``timeout`` seconds for the load to settle; True if exact. Tests and
        benchmarks only: the app never waits."""
        if self._load is not None:
            self._load.done.wait(timeout)
        return self.exact

    def count(self, text: str) -> int:
        """Tokens in ``text``: exact if the encoder is loaded, else :func:`approx_tokens`."""
        if len(text) >= HUGE_TEXT_CHARS:
            return self._huge(text)
        encoder = self._current_encoder()
        if encoder is None:
            return approx_tokens(text)
        if len(text) >= BIG_TEXT_CHARS:
            known = self._big_counts.get(text)
            if known is not None:
                self._big_counts.move_to_end(text)
                return known
            tokens = _count_in_steps(encoder, text, None)  # no steps: one count
            self._remember(text, tokens)
            return tokens
        # encode_ordinary == encode(disallowed_special=()): special-token text counts as text.
        return len(encoder.encode_ordinary(text))

    def _huge(self, text: str) -> int:
        """A huge text's exact count when ``refine`` has made it, else its estimate (made
        once, then kept until ``refine`` replaces it)."""
        key = TextKey(text)
        known = self._huge_counts.get(key)
        if known is not None:
            return known
        estimate = self._estimated.get(key)
        if estimate is None:
            encoder = self._current_encoder()
            if encoder is None and self.state == "unavailable":
                return approx_tokens(text)  # estimates are all there will ever be
            estimate = self._estimated[key] = sampled_estimate(encoder, text)
            if self.on_estimate is not None:
                self.on_estimate()
        return estimate

    def refined_texts(self) -> list[str]:
        """The huge texts :meth:`refine` has counted exactly (and whose counts are kept)."""
        return [key.text for key in self._huge_counts]

    @property
    def estimating(self) -> bool:
        """True while some count given out was an estimate of a huge text that
        :meth:`refine` has not counted exactly yet."""
        return bool(self._estimated)

    async def refine(self) -> list[str]:
        """Count exactly, in a worker thread, every huge text that was given an estimate;
        the texts now counted (a caller holding their estimates counts them again). Waits
        for the tokenizer when it is still loading."""
        texts = [key.text for key in self._estimated]
        if not texts:
            return []
        if self._load is not None and self._encoder is None:
            await asyncio.to_thread(self._load.done.wait)
        encoder = self._current_encoder()
        for text in texts:
            if encoder is None:
                tokens = approx_tokens(text)  # no tokenizer: the byte rule is the count
            else:
                tokens = await asyncio.to_thread(_count_in_steps, encoder, text, None)
            self._remember_huge(text, tokens)
        return texts

    def _remember_huge(self, text: str, tokens: int) -> None:
        """``text``'s exact count, kept (and its estimate, if it had one, dropped)."""
        key = TextKey(text)
        self._huge_counts[key] = tokens
        self._huge_counts.move_to_end(key)
        while len(self._huge_counts) > _HUGE_COUNTS_KEPT:
            self._huge_counts.popitem(last=False)
        self._estimated.pop(key, None)

    def _remember(self, text: str, tokens: int) -> None:
        self._big_counts[text] = tokens
        self._big_counts.move_to_end(text)
        while len(self._big_counts) > _BIG_COUNTS_KEPT:
            self._big_counts.popitem(last=False)

    async def precount(
        self,
        texts: Iterable[str],
        on_progress: Callable[[int, int], None] | None = None,
        *,
        estimate_huge: bool = False,
    ) -> None:
        """Count the long ones among ``texts`` in a worker thread, so the :meth:`count` that
        follows (on the event loop, which is the window's thread) finds the result at once
        instead of blocking for it. Short texts and estimates need nothing. ``on_progress``
        hears ``(characters counted, characters to count)`` as it goes (from the thread).
        With ``estimate_huge``, huge texts (:data:`HUGE_TEXT_CHARS`) only get their estimate
        (exact counts follow from :meth:`refine`); otherwise they are counted exactly too."""
        texts = list(texts)
        huge = [
            t for t in texts if len(t) >= HUGE_TEXT_CHARS and TextKey(t) not in self._huge_counts
        ]
        if estimate_huge:
            for text in huge:
                encoder = self._current_encoder()
                key = TextKey(text)
                if key in self._estimated or (encoder is None and self.state == "unavailable"):
                    continue
                self._estimated[key] = await asyncio.to_thread(sampled_estimate, encoder, text)
        encoder = self._current_encoder()
        if encoder is None:
            return
        if not estimate_huge:
            for text in huge:
                tokens = await asyncio.to_thread(_count_in_steps, encoder, text, None)
                self._remember_huge(text, tokens)
        todo = [
            t for t in texts
            if BIG_TEXT_CHARS <= len(t) < HUGE_TEXT_CHARS and t not in self._big_counts
        ]
        whole = sum(len(text) for text in todo)
        done = 0
        for text in todo:
            step = None
            if on_progress is not None:
                step = functools.partial(_report_from, on_progress, done, whole)
            tokens = await asyncio.to_thread(_count_in_steps, encoder, text, step)
            self._remember(text, tokens)
            done += len(text)
            if on_progress is not None:
                on_progress(done, whole)

    async def precount_items(
        self,
        items: Iterable[Item],
        on_progress: Callable[[int, int], None] | None = None,
        *,
        estimate_huge: bool = False,
    ) -> None:
        """:meth:`precount` for the readable text of each item (what :meth:`count_item`
        tokenises)."""
        await self.precount(
            [item_count_parts(item)[0] for item in items], on_progress,
            estimate_huge=estimate_huge,
        )

    def count_item(self, item: Item) -> int:
        """Tokens an item costs in the context (:func:`item_tokens` with this counter)."""
        return item_tokens(item, self.count)

