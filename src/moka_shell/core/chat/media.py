"""Images, audio, resources and files on their way to the model: as media when the backend
takes them, as a line of text that says what was left out when it does not.

MCP content blocks (tool results, ``ui/message``, ``ui/update-model-context``) and the
person's attachments all go through here, so every path delivers the same way.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from moka_shell.core.chat.backends import ChatMessage, MediaPart

MAX_MEDIA_BYTES = 5 * 1024 * 1024  # one image the providers accept (Anthropic's limit is 5 MB)
MAX_MEDIA_PER_REQUEST = 20  # the newest are sent; older ones are named in text
MAX_FILE_TEXT = 100_000  # characters of one text file the model reads
TEXT_MIME = ("text/", "application/json", "application/xml", "application/yaml", "application/x-yaml",
             "application/javascript", "application/toml", "application/csv", "application/sql")


MAX_ATTACHMENT_BYTES = 8 * 1024 * 1024  # one file the person attaches
MAX_ATTACHMENTS_BYTES = 10 * 1024 * 1024  # all of one message's files (the page's socket carries 16 MiB)
MAX_ATTACHMENTS = 10


@dataclass(frozen=True)
class Attachment:
    """A file the person attached to a message (kept in the store beside it)."""

    name: str
    mime_type: str
    data: bytes

    def describe(self) -> dict[str, Any]:
        """Its description, without the contents."""
        return {"name": self.name, "mimeType": self.mime_type, "size": len(self.data)}


def size_label(n: int) -> str:
    """A byte count for people: 812 B, 3.4 KB, 1.2 MB."""
    if n < 1024:
        return f"{n} B"
    return f"{n / 1024:.1f} KB" if n < 1024 * 1024 else f"{n / (1024 * 1024):.1f} MB"


def b64_size(data: str) -> int:
    """The decoded size of base64 text (without decoding it)."""
    return len(data) * 3 // 4 - data[-2:].count("=")


def is_text_mime(mime: str) -> bool:
    """Can a file of this type be read as text?"""
    return mime.startswith(TEXT_MIME) or mime.endswith(("+json", "+xml"))


@dataclass
class Delivery:
    """What one message's blocks become: text lines and the media that go beside them."""

    accepts: frozenset[str]
    lines: list[str] = field(default_factory=list)
    media: list[MediaPart] = field(default_factory=list)

    def add_media(self, kind: str, mime: str, data: str, name: str | None = None) -> None:
        """Send it if the backend takes this kind and it is small enough; otherwise say so."""
        what = f"{name + ': ' if name else ''}{kind} {mime}, {size_label(b64_size(data))}"
        if kind not in self.accepts:
            self.lines.append(f"[{what}; not sent: this model backend does not take {kind}]")
        elif b64_size(data) > MAX_MEDIA_BYTES:
            self.lines.append(f"[{what}; not sent: larger than {size_label(MAX_MEDIA_BYTES)}]")
        elif not _valid_b64(data):
            self.lines.append(f"[{what}; not sent: the data is not valid base64]")
        else:
            self.media.append(MediaPart(kind=kind, mime_type=mime, data=data, name=name))  # type: ignore[arg-type]
            self.lines.append(f"[{what}; attached]")

    def add_block(self, block: Any) -> None:
        """One MCP content block (text, image, audio, resource, resource_link)."""
        if not isinstance(block, dict):
            return
        kind = block.get("type")
        if kind == "text":
            self.lines.append(str(block.get("text", "")))
        elif kind in ("image", "audio") and isinstance(block.get("data"), str):
            self.add_media(kind, str(block.get("mimeType") or f"{kind}/*"), block["data"])
        elif kind == "resource":
            res = block.get("resource")
            self._resource(res if isinstance(res, dict) else {})
        elif kind == "resource_link":
            label = " ".join(str(block[k]) for k in ("name", "description") if block.get(k))
            self.lines.append(f"[resource link {block.get('uri', '')}{' — ' + label if label else ''}]")
        else:
            self.lines.append(f"[{kind} content]")

    def _resource(self, res: dict[str, Any]) -> None:
        uri, mime = str(res.get("uri", "")), str(res.get("mimeType") or "")
        if isinstance(res.get("text"), str):
            self.lines.append(f"[resource {uri}]\n{res['text']}")
        elif isinstance(res.get("blob"), str):
            kind = "image" if mime.startswith("image/") else "audio" if mime.startswith("audio/") else None
            if kind:
                self.add_media(kind, mime, res["blob"], name=uri)
            else:
                self.lines.append(f"[resource {uri} ({mime or 'binary'}, {size_label(b64_size(res['blob']))}); "
                                  "binary, not sent to the model]")
        else:
            self.lines.append(f"[resource {uri}]")

    def add_file(self, name: str, mime: str, data: bytes) -> None:
        """A file the person attached: text is read, images and audio go as media, the rest is named."""
        if is_text_mime(mime):
            text = data.decode("utf-8", errors="replace")
            cut = "\n… [truncated by Moka]" if len(text) > MAX_FILE_TEXT else ""
            self.lines.append(f"[file {name} ({mime})]\n{text[:MAX_FILE_TEXT]}{cut}\n[end of {name}]")
        elif mime.startswith(("image/", "audio/")):
            self.add_media(mime.split("/")[0], mime, base64.b64encode(data).decode("ascii"), name=name)
        else:
            self.lines.append(f"[file {name} ({mime}, {size_label(len(data))}); not sent: Moka can't give this "
                              "kind of file to the model]")

    def text(self) -> str:
        """The lines as one text."""
        return "\n".join(line for line in self.lines if line)


def _valid_b64(data: str) -> bool:
    try:
        base64.b64decode(data[:4096 - 4096 % 4] if len(data) > 4096 else data, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def deliver_blocks(blocks: Iterable[Any], accepts: frozenset[str]) -> Delivery:
    """Content blocks as the text and media a backend gets."""
    out = Delivery(accepts)
    for block in blocks:
        out.add_block(block)
    return out


def cap_media(messages: list[ChatMessage], limit: int = MAX_MEDIA_PER_REQUEST) -> None:
    """Keep the newest ``limit`` media of a request; older ones are named in their message's text."""
    seen = 0
    for msg in reversed(messages):
        if not msg.media:
            continue
        kept: list[MediaPart] = []
        for part in reversed(msg.media):
            seen += 1
            if seen <= limit:
                kept.append(part)
            else:
                msg.content += (f"\n[{part.kind} {part.name or part.mime_type} shown earlier; not sent again: "
                                f"Moka sends the newest {limit} per request]")
        msg.media = list(reversed(kept))
