"""The OpenTelemetry collector's file exporter output with ``compression: zstd``, decompressed where a zstd library is
installed.

The exporter writes each export as a 4-byte big-endian length and that many bytes, here a zstd frame (RFC 8878); a
``.zst`` file (``zstd`` run on an export) is frames alone. sam_model declares no zstd dependency: the ``zstandard``
package (which the langchain extra brings, through langsmith) or Python 3.14's ``compression.zstd`` is used where
importable, and without either such a file is refused in one line saying how to export JSON (it was read as text:
"not UTF-8 ... re-save the file as UTF-8"). An export written with ``format: proto`` is refused alike: reading OTLP
protobuf needs the OTLP message definitions (opentelemetry-proto), which sam_model does not ship.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sam_model.io import ZSTD_MAGIC, SAMFileError

_CHUNK = 1 << 14  # the compressed bytes given a frame's decompressor at a time
EXPORT_JSON = "configure the exporter with format: json and no compression"
PROTO = ("is OTLP protobuf (the file exporter's format: proto), which sam_model does not read (it reads OTLP JSON): "
         f"{EXPORT_JSON}")


def framing(head: bytes) -> str | None:
    """How a file whose first bytes are ``head`` holds zstd frames: ``"frames"`` (a frame at its start: a ``.zst``),
    ``"records"`` (after a 4-byte length: the exporter's), None (no zstd)."""
    return "frames" if head[:4] == ZSTD_MAGIC else "records" if head[4:8] == ZSTD_MAGIC else None


def is_proto(data: bytes) -> bool:
    """Whether ``data`` opens as the exporter's ``format: proto`` records: a 4-byte length whose high byte is 0 (no
    JSON or text opens with a NUL byte) and a request's first field, ``resource_spans`` (field 1, length-delimited:
    0x0a; logs' and metrics' requests open so too)."""
    return len(data) > 5 and data[0] == 0 and data[4] == 0x0A


def _decompressor() -> Any:
    """A function of (compressed bytes) -> bytes over every frame in them, or None where no zstd library imports."""
    try:
        import zstandard
    except ImportError:
        try:
            from compression import zstd  # type: ignore[import-not-found]  # Python 3.14's
        except ImportError:
            return None
        return lambda data: zstd.decompress(data)

    def decompress(data: bytes) -> bytes:  # a frame at a time: a stream reader returned b"" for a cut frame
        out, view, at = [], memoryview(data), 0
        frame = None
        while at < len(data):  # in chunks: a frame given the rest of the data copied that rest after it
            if frame is None:  # (unused_data) for the next frame, quadratic in a .zst of many frames
                frame = zstandard.ZstdDecompressor().decompressobj()
            chunk = view[at:at + _CHUNK]
            out.append(frame.decompress(chunk))
            at += len(chunk)
            if frame.eof:  # the next frame begins where this one ended
                at, frame = at - len(frame.unused_data), None
        if frame is not None:
            raise ValueError("the data ends inside a frame: cut, or no zstd frame")
        return b"".join(out)
    return decompress


def decoded(p: Path, head: bytes) -> bytes | None:
    """``p``'s exports decompressed, one a line (None: ``head``, its first 8 bytes, shows no zstd). Refused in one
    line: no zstd library, a cut or corrupt frame, a length past the file's end, or protobuf inside."""
    how = framing(head)
    if how is None:
        return None
    decompress = _decompressor()
    framed = " in length-prefixed frames" if how == "records" else ""
    if decompress is None:
        raise SAMFileError(f"{p} is zstd-compressed{framed} (as an OpenTelemetry collector's file exporter writes with "
                           "compression: zstd) and no zstd library is installed (zstandard, or Python 3.14's "
                           "compression.zstd): sam_model reads JSON or JSON Lines, plain or .gz; "
                           + (EXPORT_JSON if framed else f"decompress it (zstd -d {p})"))
    data = p.read_bytes()
    out, at = [], 0
    try:
        if how == "frames":
            out.append(decompress(data))
        while how == "records" and at < len(data):
            n = int.from_bytes(data[at:at + 4], "big")
            if at + 4 + n > len(data):
                raise SAMFileError(f"{p} is zstd-compressed in length-prefixed frames (compression: zstd), but the "
                                   f"frame at byte {at} says {n} bytes and the file ends {len(data) - at - 4} bytes "
                                   "after it (cut while written): re-copy the file once the exporter has flushed it")
            out.append(decompress(data[at + 4:at + 4 + n]))
            at += 4 + n
    except SAMFileError:
        raise
    except Exception as exc:  # zstandard.ZstdError, compression.zstd.ZstdError: the library's own error
        raise SAMFileError(f"{p} is zstd-compressed{framed} (compression: zstd), but a frame{f' at byte {at}' if framed else ''} "
                           f"cannot be decompressed ({exc}): re-copy the file, or {EXPORT_JSON}") from None
    if out and _proto_message(out[0]):
        raise SAMFileError(f"{p} (decompressed) {PROTO}")
    return b"\n".join(x.strip() for x in out)


def _proto_message(data: bytes) -> bool:
    """Whether a decompressed export is a protobuf request (its first field ``resource_spans``, 0x0a), not JSON text
    (which may open with a newline, 0x0a too, then ``{``; a request's bytes are no UTF-8 text past its ids)."""
    if data[:1] != b"\x0a":
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return data.lstrip()[:1] not in (b"{", b"[")
