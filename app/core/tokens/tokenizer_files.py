"""The tokenizer's BPE files: which encoding a model uses, each encoding's spec and checksum,
the cache folder laid out as tiktoken lays it out, and a download with a timeout."""

from __future__ import annotations

import base64
import hashlib
import logging
import os
import uuid
from dataclasses import dataclass
from pathlib import Path

from ..system.dirs import default_cache_dir

log = logging.getLogger(__name__)

DOWNLOAD_TIMEOUT_SECONDS = 30.0


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

