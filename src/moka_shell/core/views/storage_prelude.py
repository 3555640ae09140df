"""The storage part of the view prelude: ``localStorage``, ``sessionStorage`` and ``indexedDB``
defined in the view's own (opaque-origin) window, before any of the app's scripts run.

The snapshot is embedded in the document as JSON, so the app reads its values with no round
trip. Changes are batched per microtask and posted to the parent like any other view message
(``moka/storage``); the proxy relays them and the core persists them (``storage.py``). Other
views of the same server learn of a change through ``moka/storage-changed``, which fires a
``storage`` event there, as another tab of the same origin would see.
"""

from __future__ import annotations

import json
import re
from typing import Any

from moka_shell.core.views.storage import MAX_MESSAGES_PER_WINDOW, MAX_OPS_PER_MESSAGE, RATE_WINDOW

# Written as plain ES5 so every engine Moka runs views in can parse it. `__BOOT__` is replaced
# by the snapshot (storage.Snapshot.to_json(), or {"off": true} for `moka check --no-storage`).
# A batch goes at most every `__GAP__` ms (unless it grows past 1 MiB or `__MAXOPS__` changes), so a
# view writing in a loop stays within the core's rate and batch bounds (storage.py) and is never refused.
_SCRIPT = r"""(function(){var B=__BOOT__,P=window.parent,M="moka/storage";
function post(m){try{P.postMessage(m,"*")}catch(e){}}
function err(msg,name){try{return new DOMException(msg,name)}catch(e){var x=new Error(msg);x.name=name;return x}}
function install(n,get){try{Object.defineProperty(window,n,{configurable:true,enumerable:true,get:get})}catch(e){}}
var NOIDB="IndexedDB is not available to MCP App views in Moka (views run in an opaque origin); "+
"use localStorage, which Moka keeps for this app's server.";
function idbFail(){throw err(NOIDB,"SecurityError")}
var idb={open:idbFail,deleteDatabase:idbFail,cmp:idbFail,databases:function(){return Promise.reject(err(NOIDB,"SecurityError"))}};
install("indexedDB",function(){return idb});
if(B.off){var told={};["localStorage","sessionStorage"].forEach(function(n){install(n,function(){
if(!told[n]){told[n]=1;post({jsonrpc:"2.0",method:M,params:{area:n==="localStorage"?"local":"session",ops:[],denied:true}})}
throw err("Failed to read the '"+n+"' property from 'Window': The document is sandboxed and lacks the "+
"'allow-same-origin' flag.","SecurityError")})});return}
var now=Date.now.bind(Date),soonly=window.queueMicrotask?window.queueMicrotask.bind(window):function(f){Promise.resolve().then(f)};
function area(name,items,used,quota){var data=new Map(items),pend=[],pendN=0,soon=false,told=false,keys=null,last=-1e9;
function flush(){soon=false;if(told&&!pend.length)return;told=true;last=now();var ops=pend;pend=[];pendN=0;
post({jsonrpc:"2.0",method:M,params:{area:name,ops:ops}})}
function later(){if(!soon){soon=true;var w=last+__GAP__-now();if(w>0)setTimeout(flush,w);else soonly(flush)}}
function touch(){if(!told)later()}
function queue(op,n){keys=null;pend.push(op);pendN+=n;if(pendN>1048576||pend.length>=__MAXOPS__)flush();else later()}
var api={getItem:function(k){touch();k=String(k);return data.has(k)?data.get(k):null},
setItem:function(k,v){touch();k=String(k);v=String(v);var old=data.get(k);
var d=(old===undefined?k.length:-old.length)+v.length;
if(used+d>quota||(v.length>1300000&&JSON.stringify(v).length>8388608))throw err("Failed to execute 'setItem' on "+
"'Storage': Setting the value of '"+k.slice(0,64)+"' exceeded the quota.","QuotaExceededError");
if(old===v)return;data.set(k,v);used+=d;queue({op:"set",key:k,value:v},k.length+v.length)},
removeItem:function(k){touch();k=String(k);if(!data.has(k))return;used-=k.length+data.get(k).length;data.delete(k);
queue({op:"remove",key:k},k.length)},
clear:function(){touch();if(!data.size)return;data.clear();used=0;pend=[];pendN=0;queue({op:"clear"},0)},
key:function(i){touch();if(!keys)keys=Array.from(data.keys());i=Number(i)>>>0;return i<keys.length?keys[i]:null}};
var proto=Object.create(typeof Storage==="function"?Storage.prototype:Object.prototype);
Object.keys(api).forEach(function(n){Object.defineProperty(proto,n,{value:api[n],writable:true,configurable:true})});
Object.defineProperty(proto,"length",{get:function(){touch();return data.size},configurable:true});
var t=Object.create(proto);
var obj=new Proxy(t,{get:function(o,p){if(typeof p==="symbol"||p in o)return Reflect.get(o,p);touch();
return data.has(p)?data.get(p):undefined},
set:function(o,p,v){if(typeof p==="symbol")return Reflect.set(o,p,v);api.setItem(p,v);return true},
has:function(o,p){if(typeof p==="symbol"||p in o)return p in o;touch();return data.has(p)},
deleteProperty:function(o,p){if(typeof p==="symbol")return Reflect.deleteProperty(o,p);api.removeItem(p);return true},
ownKeys:function(o){touch();return Array.from(data.keys()).concat(Reflect.ownKeys(o))},
getOwnPropertyDescriptor:function(o,p){if(typeof p!=="symbol"&&!(p in o)&&data.has(p))
return{value:data.get(p),writable:true,enumerable:true,configurable:true};return Reflect.getOwnPropertyDescriptor(o,p)},
defineProperty:function(o,p,d){if(typeof p==="symbol")return Reflect.defineProperty(o,p,d);api.setItem(p,d.value);return true}});
function remote(c){keys=null;var old=null;if(c.op==="clear"){data.clear();used=0}else if(c.op==="remove"){
if(data.has(c.key)){used-=c.key.length+data.get(c.key).length;old=data.get(c.key);data.delete(c.key)}}
else{old=data.has(c.key)?data.get(c.key):null;used+=(old===null?c.key.length:-old.length)+c.newValue.length;
data.set(c.key,c.newValue)}
var ev;try{ev=new StorageEvent("storage",{key:c.op==="clear"?null:c.key,oldValue:old,
newValue:c.op==="set"?c.newValue:null,url:location.href})}catch(e){ev=new Event("storage")}
try{Object.defineProperty(ev,"storageArea",{value:obj})}catch(e){}dispatchEvent(ev)}
function reset(items){keys=null;data=new Map(items);used=0;data.forEach(function(v,k){used+=k.length+v.length})}
return{obj:obj,remote:remote,reset:reset}}
var L=area("local",B.local,B.localUsed,B.quota),S=area("session",B.session,B.sessionUsed,B.quota);
install("localStorage",function(){return L.obj});install("sessionStorage",function(){return S.obj});
addEventListener("message",function(e){var m;if(e.source!==P)return;m=e.data;
if(!m||m.method!=="moka/storage-changed"||!m.params)return;e.stopImmediatePropagation();
var a=m.params.area==="session"?S:L;if(m.params.reset)a.reset(m.params.reset);
else(m.params.changes||[]).forEach(a.remote)},true)})();"""

_UNSAFE = re.compile("[<>&\u2028\u2029\ud800-\udfff]")


def script_json(value: Any) -> str:
    """JSON that is safe inside a <script> element: no '</script>', no HTML comment, no line
    separators JavaScript would choke on, and no lone surrogate UTF-8 could not carry."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


# Half the core's rate: 10 ms between batches where the core takes 200 a second.
FLUSH_GAP_MS = int(RATE_WINDOW * 1000 / MAX_MESSAGES_PER_WINDOW * 2)
_FILLED = _SCRIPT.replace("__GAP__", str(FLUSH_GAP_MS)).replace("__MAXOPS__", str(MAX_OPS_PER_MESSAGE))


def storage_script(boot: dict[str, Any]) -> str:
    """The storage prelude for one view document."""
    return "<script>" + _FILLED.replace("__BOOT__", script_json(boot), 1) + "</script>"
