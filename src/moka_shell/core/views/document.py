"""The view document: the app's HTML with Moka's prelude, and the URLs a view's frames load."""

from __future__ import annotations

import urllib.parse
from typing import TYPE_CHECKING, Any

from moka_shell.core.shell import Endpoints
from moka_shell.core.views.scheme import SCHEME_PRELUDE
from moka_shell.core.views.storage_prelude import script_json

if TYPE_CHECKING:
    from moka_shell.core.views.view import View

# Prepended to every view document: reports errors (with their stacks), files that failed to load
# (a script, stylesheet or image whose element fired "error"), console.error lines (at most 200
# reports a document) and CSP violations to the host as
# standard MCP log notifications, so a broken view is never a silent empty frame. Its first
# listener reads each message's origin before the app's own listeners read the data: Chromium
# slows down reading the data of a cross-origin message whose origin nobody looked at (about
# 1 ms a message in QtWebEngine 6.11; docs/performance.md §2), and the apps' SDK never looks.
PRELUDE = """<script>(function(){addEventListener("message",function(e){e.origin},true);
var p=window.parent,n=0;function s(l,d){if(++n>200)return;try{p.postMessage({jsonrpc:"2.0",
method:"notifications/message",params:{level:l,logger:"moka.view",data:d}},"*")}catch(e){}}
function k(x){return String(x&&x.stack||"").slice(0,2000)}
addEventListener("error",function(e){s("error",{kind:"error",message:String(e.message||"error"),
source:String(e.filename||""),line:e.lineno||0,stack:k(e.error)})});addEventListener("error",function(e){
var t=e.target;if(!t||t===window||!t.tagName)return;s("error",{kind:"load",tag:t.tagName.toLowerCase(),
url:String(t.currentSrc||t.src||t.href||"").slice(0,2000)})},true);addEventListener("unhandledrejection",function(e){
var r=e.reason;s("error",{kind:"unhandledrejection",message:String(r&&r.message||r),stack:k(r)})});
var c=console.error;console.error=function(){try{s("error",{kind:"console",message:[].map.call(arguments,
function(a){return a&&a.stack?String(a.stack):typeof a=="object"?JSON.stringify(a):String(a)}).join(" ").slice(0,2000)})}
catch(e){}return c.apply(console,arguments)};
document.addEventListener("securitypolicyviolation",function(e){s("warning",{kind:"csp",
directive:String(e.effectiveDirective||e.violatedDirective),blockedURI:String(e.blockedURI||"")})});})();</script>"""


def inject_prelude(html: str, extra: str = "") -> str:
    """Put the prelude (and ``extra``, the view's storage script) before any of the document's own scripts."""
    prelude = PRELUDE + SCHEME_PRELUDE + extra
    lower = html[:4096].lower()
    for tag in ("<head>", "<head "):
        i = lower.find(tag)
        if i >= 0:
            j = html.index(">", i) + 1
            return html[:j] + prelude + html[j:]
    i = lower.find("<html")
    if i >= 0:
        j = html.index(">", i) + 1
        return html[:j] + prelude + html[j:]
    return prelude + html


def csp_audit_script(view: View) -> str:
    """The CSP audit line (spec: hosts SHOULD log CSP configurations): the policy this document runs
    under, written to the view's own console as it loads, with what Moka refused or left out."""
    lines = [("info", f"[Moka] This view ({view.tool.name} from {view.server}) runs under the "
                      f"Content-Security-Policy: {view.policy.header}")]
    lines += [("warn", f"[Moka] Refused from the resource's _meta.ui: {r}") for r in view.policy.rejected]
    lines += [("info", f"[Moka] Left out of the policy (harmless): {r}") for r in view.policy.ignored]
    lines += [("warn", f"[Moka] Not granted: {r}") for r in view.policy.denied]
    calls = "".join(f"console.{level}({script_json(text)});" for level, text in lines)
    return f"<script>try{{{calls}}}catch(e){{}}</script>"


def proxy_url(endpoints: Endpoints, view_id: str, key: str, allow: str) -> str:
    """Where the UI loads a view's sandbox proxy (the sandbox origin).

    The view's parameters go in the fragment: the page's URL stays the same for every view, so
    the browser serves it from its cache, and a fragment is never sent to any server.
    """
    q = urllib.parse.urlencode({"view": f"/view/{view_id}?k={key}", "allow": allow,
                                "host": endpoints.host_origin, "id": view_id})
    return f"{endpoints.sandbox_origin}{endpoints.proxy_page}#{q}"


def popout_url(endpoints: Endpoints, view_id: str) -> str:
    """The host-origin page that shows one view alone (pop-out windows, ``moka check``)."""
    return f"{endpoints.host_origin}/?" + urllib.parse.urlencode({"token": endpoints.token, "view": view_id})


def mount_data(view: View, wire_mode: str, proxy: str) -> dict[str, Any]:
    """The ``view.created`` payload: everything the UI needs to mount the view (its proxy at ``proxy``)."""
    data: dict[str, Any] = {
        "viewId": view.id, "server": view.server, "tool": view.tool.name, "callId": view.call_id,
        "title": view.tool.title or view.tool.name, "proxyUrl": proxy, "allow": view.policy.allow,
        "displayMode": view.display_mode, "wireMode": wire_mode, "state": view.state,
        "prefersBorder": view.resource.ui_meta.get("prefersBorder", None),
        "seq": view.sent.seq,  # the last message numbered so far: the page expects the next (redelivery.py)
    }
    for key, value in (("conversationId", view.conversation_id), ("messageId", view.message_id),
                       ("recordId", view.record_id), ("height", view.height), ("failure", view.failure)):
        if value:
            data[key] = value
    return {k: v for k, v in data.items() if v is not None}
