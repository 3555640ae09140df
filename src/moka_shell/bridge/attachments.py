"""Reading the files a ``chat.send`` carries: names, types and base64 contents, within Moka's caps."""

from __future__ import annotations

import base64
import binascii
import mimetypes
from typing import Any

from moka_shell.core.chat.media import MAX_ATTACHMENT_BYTES, MAX_ATTACHMENTS, MAX_ATTACHMENTS_BYTES, Attachment, size_label
from moka_shell.errors import InvalidParamsError


def read_attachments(value: Any) -> list[Attachment]:
    """``[{name, mimeType, data}]`` (data in base64) as Attachments; too many or too big is refused."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidParamsError("'attachments' must be a list of {name, mimeType, data}")
    if len(value) > MAX_ATTACHMENTS:
        raise InvalidParamsError(f"at most {MAX_ATTACHMENTS} files go with one message ({len(value)} were given)")
    out, total = [], 0
    for item in value:
        if not isinstance(item, dict) or not isinstance(item.get("data"), str):
            raise InvalidParamsError("each attachment needs 'data' (base64), 'name' and 'mimeType'")
        name = str(item.get("name") or "file").replace("/", "_").replace("\\", "_")[:200]
        try:
            data = base64.b64decode(item["data"], validate=True)
        except (binascii.Error, ValueError):
            raise InvalidParamsError(f"the attachment {name!r} is not valid base64") from None
        if len(data) > MAX_ATTACHMENT_BYTES:
            raise InvalidParamsError(f"{name} is {size_label(len(data))}; one file may be at most "
                                     f"{size_label(MAX_ATTACHMENT_BYTES)}")
        total += len(data)
        if total > MAX_ATTACHMENTS_BYTES:
            raise InvalidParamsError(f"the files of one message may be at most {size_label(MAX_ATTACHMENTS_BYTES)} "
                                     "together")
        mime = str(item.get("mimeType") or mimetypes.guess_type(name)[0] or "application/octet-stream")
        out.append(Attachment(name=name, mime_type=mime[:100], data=data))
    return out
