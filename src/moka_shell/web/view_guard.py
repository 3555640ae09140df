"""A script put before everything in a view document: no WebRTC for views (finding S3).

CSP has no say over ``RTCPeerConnection`` in Chromium, so a view whose policy is
``connect-src 'none'`` could still send data to any host and port through STUN/TURN. The script
makes the WebRTC constructors undefined and non-configurable on the view's window before any of
the view's own scripts run. A child frame the view creates gets an opaque origin of its own in the
sandbox, so the view cannot borrow that frame's constructors (measured in Chromium and
QtWebEngine: reading them throws a SecurityError). The desktop app adds the same guard to every
frame through QtWebEngine (shells/desktop/sandbox.py).
"""

from __future__ import annotations

import json

WEBRTC_NAMES = ("RTCPeerConnection", "webkitRTCPeerConnection", "RTCDataChannel", "RTCIceCandidate",
                "RTCSessionDescription", "RTCRtpSender", "RTCRtpReceiver", "RTCRtpTransceiver",
                "RTCDtlsTransport", "RTCIceTransport", "RTCSctpTransport", "RTCCertificate")
WEBRTC_GUARD_JS = ("(function(){var n=" + json.dumps(list(WEBRTC_NAMES)) + ";for(var i=0;i<n.length;i++){"
                   "try{Object.defineProperty(window,n[i],{value:undefined,writable:false,configurable:false})}"
                   "catch(e){}}})();")
WEBRTC_GUARD = f"<script>{WEBRTC_GUARD_JS}</script>"
