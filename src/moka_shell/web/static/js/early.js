// Loaded as a classic script before any module: the desktop core may push events through
// evaluate_js as soon as the page exists, before js/api.js has run. Buffer them here;
// api.js takes the buffer over and replays it once every screen has subscribed.
"use strict";
window.__mokaEarly = window.__mokaEarly || [];
window.__mokaPush = function (evt) {
  window.__mokaEarly.push(evt);
};
