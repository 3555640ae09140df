"""Make a view's ``prefers-color-scheme`` agree with Moka's theme, not the operating system's.

Many apps (4 of the 6 official examples tried) style themselves with
``@media (prefers-color-scheme: dark)`` and ``matchMedia`` instead of the host context's
``theme``, so they clash with Moka whenever its mode differs from the system's. The engines
give the host no way to fix it from outside: measured in Chromium (docs/security.md and the
desktop notes), a sandboxed frame's preference follows the system whatever ``color-scheme`` the
frames carry, unless the frame and its document disagree, and then the engine paints an opaque
white or black backdrop behind the app.

So the view's prelude does it from inside, once the host has said which theme it uses (the
``hostContext.theme`` of the ``ui/initialize`` answer, then ``host-context-changed``): every
``prefers-color-scheme`` condition in the document's style sheets (and ``media`` attributes,
and sheets added later) is rewritten to a condition that is always true or always false, and
``matchMedia`` answers such queries the same way. The original text is kept, so a theme switch
rewrites from it again.

The colours Moka sends are ``light-dark(light, dark)`` (the spec's preference), which resolve by
the element's ``color-scheme``: the prelude sets the document's ``color-scheme`` to Moka's theme
as the view SDK's ``applyDocumentTheme`` does, so an app that applies the variables without it
(or whose style sheet says ``light dark``, which would follow the system) still resolves them to
the theme's colours. Nothing else of the app is touched.
"""

from __future__ import annotations

# The rewrite uses width conditions that are always true ((min-width:0px)) or always false
# (a range nothing satisfies) rather than "all"/"not all", which are not valid inside a query.
SCHEME_PRELUDE = """<script>(function(){var mode=null,orig=new WeakMap(),mm=window.matchMedia.bind(window),
RX=/\\(\\s*prefers-color-scheme\\s*:\\s*(dark|light)\\s*\\)/gi,HAS=/prefers-color-scheme/i,
YES="(min-width:0px)",NO="((max-width:0px) and (min-width:1px))";
function fix(q){return mode?String(q).replace(RX,function(_,w){return w.toLowerCase()===mode?YES:NO}):String(q)}
function rules(list){for(var i=0;i<list.length;i++){var r=list[i];if(!r.cssRules)continue;
if(r.media&&r.media.mediaText!==undefined){if(!orig.has(r))orig.set(r,r.media.mediaText);
var t=orig.get(r);if(HAS.test(t))r.media.mediaText=fix(t)}rules(r.cssRules)}}
function sweep(){if(!mode)return;var s=document.styleSheets;for(var i=0;i<s.length;i++){try{rules(s[i].cssRules)}catch(e){}}
var n=document.querySelectorAll("link[media],style[media],source[media]");for(var j=0;j<n.length;j++){var el=n[j];
if(!el.hasAttribute("data-moka-media"))el.setAttribute("data-moka-media",el.getAttribute("media")||"");
var m=el.getAttribute("data-moka-media");if(HAS.test(m))el.setAttribute("media",fix(m))}}
window.matchMedia=function(q){return mm(fix(q))};
var ins=CSSStyleSheet.prototype.insertRule;CSSStyleSheet.prototype.insertRule=function(){var k=ins.apply(this,arguments);
if(mode)try{rules(this.cssRules)}catch(e){}return k};
function set(t){if((t!=="dark"&&t!=="light")||t===mode)return;mode=t;sweep();
try{document.documentElement.style.colorScheme=t}catch(e){}}
addEventListener("message",function(e){if(e.source!==parent)return;var d=e.data;if(!d||d.jsonrpc!=="2.0")return;
var c=(d.result&&d.result.hostContext)||(d.method==="ui/notifications/host-context-changed"&&d.params);
if(c&&c.theme)set(c.theme)});
function styles(n){return n&&(n.nodeName==="STYLE"||n.nodeName==="LINK")}
new MutationObserver(function(ms){for(var i=0;i<ms.length;i++){var m=ms[i];if(styles(m.target)||styles(m.target.parentNode)){sweep();return}
for(var j=0;j<m.addedNodes.length;j++)if(styles(m.addedNodes[j])){sweep();return}}})
.observe(document,{childList:true,subtree:true,characterData:true});
document.addEventListener("load",function(e){if(styles(e.target))sweep()},true);})();</script>"""
