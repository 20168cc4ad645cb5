"""Token counting: a byte estimate everywhere, exact tiktoken counts once the encoding has loaded.

The estimate (``ceil(utf-8 bytes / 4)``) is the rule the compaction algorithm is specified in, so
budgets and truncation use it. ``TokenCounter`` is for the context gauge: it answers at once with
the estimate and switches to exact counts when its encoding is ready; loading happens in a
background thread and never holds up the caller (the UI thread included).

The BPE files of the encodings Coco uses ship inside the package (``app/core/data/tiktoken``, in
the wheel and the bundle), so counts are exact with no network: that file is read first, its
checksum checked. Only when it is missing or damaged is a cache folder looked at, laid out as
tiktoken lays it out (file name = sha1 of the file's URL), without touching ``os.environ``:
tiktoken only takes its folder from the ``TIKTOKEN_CACHE_DIR`` variable, so Coco reads the file
itself and builds the ``Encoding`` from it.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import hashlib
import logging
import math
import os
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import tiktoken

from .dirs import default_cache_dir
from .items import Item, item_count_parts

log = logging.getLogger(__name__)

BYTES_PER_TOKEN = 4
# Per-item framing (role, separators) the model also pays for; a small constant like Codex's.
ITEM_OVERHEAD_TOKENS = 4
DOWNLOAD_TIMEOUT_SECONDS = 30.0

CounterState = Literal["loading", "ready", "unavailable"]

# Texts this long are counted in a worker thread before the core needs their count
# (:meth:`TokenCounter.precount`): tokenising a 1 MB reply takes 0.2–0.6 s, and the core's loop
# is the window's thread (qasync). Their counts are kept for the next use of the same text.
BIG_TEXT_CHARS = 20_000
_BIG_COUNTS_KEPT = 64
# A text is counted in steps of about this many characters, so progress can be told.
COUNT_STEP_CHARS = 2_000_000
# Texts this long (a pasted log, a runaway reply) are not counted exactly where a count is
# needed at once (opening a session, the gauge): counting 50 MB takes seconds. They get an
# estimate from a few exactly counted samples, marked approximate, and their exact count is
# made in a worker thread afterwards (:meth:`TokenCounter.refine`); a decision that needs it
# (a turn, a compaction) waits for that.
HUGE_TEXT_CHARS = 1_000_000
_SAMPLES = 4
_SAMPLE_CHARS = 16_000
_HUGE_COUNTS_KEPT = 16


def _encoded_length(encoder: tiktoken.Encoding, text: str) -> int:
    """How many tokens ``text`` encodes to, special-token text counted as text.

    Through tiktoken's token buffer where it has one: the list ``encode_ordinary`` returns
    is built holding the GIL (tens of milliseconds for a megabyte), the buffer is not, so a
    count in a worker thread leaves the main thread free."""
    core = getattr(encoder, "_core_bpe", None)
    to_buffer = getattr(core, "encode_to_tiktoken_buffer", None)
    if to_buffer is not None:
        try:
            return memoryview(to_buffer(text, set())).nbytes // 4
        except (TypeError, ValueError, UnicodeEncodeError):
            pass  # an older or stricter tiktoken, or lone surrogates: the ordinary path
    return len(encoder.encode_ordinary(text))


def _report_from(
    on_progress: Callable[[int, int], None], base: int, whole: int, counted: int
) -> None:
    on_progress(base + counted, whole)


def _step_end(text: str, start: int, step: int) -> int:
    """Where the step from ``start`` ends: after the last line break before ``start + step``
    that is followed by a character other than whitespace (tiktoken's pieces never span such
    a place, so counting the steps apart gives the same total), else at ``start + step``."""
    end = start + step
    if end >= len(text):
        return len(text)
    newline = text.rfind("\n", start, end)
    while newline > start and text[newline + 1].isspace():
        newline = text.rfind("\n", start, newline)
    return newline + 1 if newline > start else end


def _count_in_steps(
    encoder: tiktoken.Encoding, text: str, on_step: Callable[[int], None] | None
) -> int:
    """:func:`_encoded_length` of ``text``, :data:`COUNT_STEP_CHARS` at a time, telling
    ``on_step`` how many characters are counted so far."""
    if on_step is None or len(text) <= COUNT_STEP_CHARS:
        return _encoded_length(encoder, text)
    total = 0
    start = 0
    while start < len(text):
        end = _step_end(text, start, COUNT_STEP_CHARS)
        total += _encoded_length(encoder, text[start:end])
        start = end
        on_step(start)
    return total


def sampled_estimate(encoder: tiktoken.Encoding | None, text: str) -> int:
    """About how many tokens the long ``text`` holds, from :data:`_SAMPLES` pieces of
    :data:`_SAMPLE_CHARS` characters spread over it, counted exactly (with ``encoder``) or by
    the byte rule; the cost does not grow with the text."""
    length = len(text)
    size = max(1, min(_SAMPLE_CHARS, length // _SAMPLES))
    starts = sorted({(length - size) * index // (_SAMPLES - 1) for index in range(_SAMPLES)})
    pieces = [text[start : start + size] for start in starts]
    if encoder is None:
        sampled = sum(approx_tokens(piece) for piece in pieces)
    else:
        sampled = sum(_encoded_length(encoder, piece) for piece in pieces)
    return max(1, round(sampled * length / sum(len(piece) for piece in pieces)))


def approx_tokens(text: str) -> int:
    """Token estimate of ``text``: ``ceil(utf-8 bytes / 4)`` (spec section 3)."""
    return math.ceil(_utf8_len(text) / BYTES_PER_TOKEN)


def encoding_name_for_model(model: str) -> str:
    """The tiktoken encoding a model uses: ``cl100k_base`` for the GPT-3.5/GPT-4 generation and
    embeddings, ``o200k_base`` for everything newer or unknown."""
    name = model.strip().lower().rsplit("/", 1)[-1]  # "openai/gpt-4" → "gpt-4"
    name = name.removeprefix("ft:")
    if name.startswith(("gpt-3.5", "gpt-35", "text-embedding-", "davinci-002", "babbage-002")):
        return "cl100k_base"
    if name == "gpt-4" or name.startswith("gpt-4-"):  # not gpt-4o, gpt-4.1, gpt-4.5
        return "cl100k_base"
    return "o200k_base"


def truncate_middle(text: str, max_tokens: int) -> tuple[str, int]:
    """Keep the head and tail of ``text`` within ``max_tokens`` (estimated), Codex's rule.

    Returns ``(text, 0)`` when it fits. Otherwise the head and tail halves of ``max_tokens * 4``
    bytes, cut on character boundaries, around the marker ``…N tokens truncated…`` (no line
    breaks added), where N is the
    estimated number of tokens removed; returns ``(new_text, N)``.
    """
    data = text.encode("utf-8", "surrogatepass")
    total_tokens = math.ceil(len(data) / BYTES_PER_TOKEN)
    if total_tokens <= max_tokens:
        return text, 0
    if max_tokens <= 0:
        return _marker(total_tokens), total_tokens
    budget = max_tokens * BYTES_PER_TOKEN
    head_end = _char_start_at_or_before(data, budget // 2)
    tail_start = _char_start_at_or_after(data, len(data) - (budget - budget // 2))
    removed = math.ceil((tail_start - head_end) / BYTES_PER_TOKEN)
    head = data[:head_end].decode("utf-8", "surrogatepass")
    tail = data[tail_start:].decode("utf-8", "surrogatepass")
    # Joined with nothing between, as Codex 0.169.0 sends it.
    return f"{head}{_marker(removed)}{tail}", removed


def _marker(removed_tokens: int) -> str:
    return f"…{removed_tokens} tokens truncated…"


def _utf8_len(text: str) -> int:
    # surrogatepass: a lone surrogate (possible in model-sent JSON) must not make counting raise.
    return len(text.encode("utf-8", "surrogatepass"))


def _is_continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


def _char_start_at_or_before(data: bytes, index: int) -> int:
    while 0 < index < len(data) and _is_continuation(data[index]):
        index -= 1
    return index


def _char_start_at_or_after(data: bytes, index: int) -> int:
    while 0 < index < len(data) and _is_continuation(data[index]):
        index += 1
    return index


# --- tiktoken encodings ----------------------------------------------------------------------


@dataclass(frozen=True)
class _EncodingSpec:
    """What tiktoken_ext.openai_public defines for one encoding (a test checks they agree)."""

    name: str
    url: str
    sha256: str
    pat_str: str
    special_tokens: dict[str, int]

    @property
    def cache_file_name(self) -> str:
        # tiktoken's cache key (tiktoken/load.py: read_file_cached).
        return hashlib.sha1(self.url.encode()).hexdigest()


_ENCODING_SPECS: dict[str, _EncodingSpec] = {
    "cl100k_base": _EncodingSpec(
        name="cl100k_base",
        url="https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        pat_str=(
            r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++"""
            r"""[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
        ),
        special_tokens={
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
    "o200k_base": _EncodingSpec(
        name="o200k_base",
        url="https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        pat_str=(
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"""
            r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"""
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"""
            r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"""
            r"""\p{N}{1,3}|"""
            r""" ?[^\s\p{L}\p{N}]+[\r\n/]*|"""
            r"""\s*[\r\n]+|"""
            r"""\s+(?!\S)|"""
            r"""\s+"""
        ),
        special_tokens={"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    ),
}


def tokenizer_cache_dir(cache_dir: Path | None = None) -> Path:
    """Where BPE files are looked for: ``cache_dir``, else ``$TIKTOKEN_CACHE_DIR``, else the
    app's cache folder."""
    if cache_dir is not None:
        return cache_dir
    from_env = os.environ.get("TIKTOKEN_CACHE_DIR")
    if from_env:
        return Path(from_env)
    return default_cache_dir() / "tiktoken"


# Where the shipped BPE files are: ``<encoding name>.tiktoken`` (package data, see pyproject.toml
# and packaging/coco.spec).
PACKAGED_TOKENIZER_DIR = Path(__file__).parent / "data" / "tiktoken"


def _read_packaged_bpe(spec: _EncodingSpec) -> bytes | None:
    return _read_checked_bpe(spec, PACKAGED_TOKENIZER_DIR / f"{spec.name}.tiktoken")


def _read_cached_bpe(spec: _EncodingSpec, folder: Path) -> bytes | None:
    return _read_checked_bpe(spec, folder / spec.cache_file_name)


def _read_checked_bpe(spec: _EncodingSpec, path: Path) -> bytes | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if hashlib.sha256(data).hexdigest() != spec.sha256:
        log.warning("tokenizer file %s does not match its checksum; ignoring it", path)
        return None
    return data


def _download_bpe(spec: _EncodingSpec, folder: Path) -> bytes:
    # Our own fetch (not tiktoken's) so it has a timeout and writes to our folder, not the env's.
    import urllib.request

    with urllib.request.urlopen(spec.url, timeout=DOWNLOAD_TIMEOUT_SECONDS) as response:
        data: bytes = response.read()
    if hashlib.sha256(data).hexdigest() != spec.sha256:
        raise ValueError(f"downloaded {spec.name} file does not match its checksum")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f"{spec.cache_file_name}.{uuid.uuid4().hex}.tmp"
        tmp.write_bytes(data)
        tmp.replace(folder / spec.cache_file_name)
    except OSError as exc:  # an unwritable cache still leaves us a usable encoding
        log.info("could not cache tokenizer file in %s: %s", folder, exc)
    return data


def _parse_bpe(data: bytes) -> dict[bytes, int]:
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


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
        self.model = model
        self.encoding_name = encoding_name_for_model(model)
        spec = _ENCODING_SPECS[self.encoding_name]
        self._shared = _SHARED
        got = self._shared.get_or_start(spec, tokenizer_cache_dir(cache_dir), allow_download)
        self._encoder: tiktoken.Encoding | None = None
        self._load: _Load | None = None
        self._big_counts: OrderedDict[str, int] = OrderedDict()  # see BIG_TEXT_CHARS
        # See HUGE_TEXT_CHARS: exact counts made by ``refine``, and estimates awaiting one.
        self._huge_counts: OrderedDict[str, int] = OrderedDict()
        self._estimated: dict[str, int] = {}
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
            tokens = _encoded_length(encoder, text)
            self._remember(text, tokens)
            return tokens
        # encode_ordinary == encode(disallowed_special=()): special-token text counts as text.
        return len(encoder.encode_ordinary(text))

    def _huge(self, text: str) -> int:
        """A huge text's exact count when ``refine`` has made it, else its estimate (made
        once, then kept until ``refine`` replaces it)."""
        known = self._huge_counts.get(text)
        if known is not None:
            return known
        estimate = self._estimated.get(text)
        if estimate is None:
            encoder = self._current_encoder()
            if encoder is None and self.state == "unavailable":
                return approx_tokens(text)  # estimates are all there will ever be
            estimate = self._estimated[text] = sampled_estimate(encoder, text)
            if self.on_estimate is not None:
                self.on_estimate()
        return estimate

    def refined_texts(self) -> list[str]:
        """The huge texts :meth:`refine` has counted exactly (and whose counts are kept)."""
        return list(self._huge_counts)

    @property
    def estimating(self) -> bool:
        """True while some count given out was an estimate of a huge text that
        :meth:`refine` has not counted exactly yet."""
        return bool(self._estimated)

    async def refine(self) -> list[str]:
        """Count exactly, in a worker thread, every huge text that was given an estimate;
        the texts now counted (a caller holding their estimates counts them again). Waits
        for the tokenizer when it is still loading."""
        texts = list(self._estimated)
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
        self._huge_counts[text] = tokens
        self._huge_counts.move_to_end(text)
        while len(self._huge_counts) > _HUGE_COUNTS_KEPT:
            self._huge_counts.popitem(last=False)
        self._estimated.pop(text, None)

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
        huge = [t for t in texts if len(t) >= HUGE_TEXT_CHARS and t not in self._huge_counts]
        if estimate_huge:
            for text in huge:
                encoder = self._current_encoder()
                if text in self._estimated or (encoder is None and self.state == "unavailable"):
                    continue
                self._estimated[text] = await asyncio.to_thread(sampled_estimate, encoder, text)
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


def item_tokens(item: Item, count: Callable[[str], int]) -> int:
    """Tokens an item costs in the context: its readable text counted by ``count``, its
    encrypted content estimated from its length, plus a small per-item overhead."""
    readable, opaque = item_count_parts(item)
    return count(readable) + approx_tokens(opaque) + ITEM_OVERHEAD_TOKENS
