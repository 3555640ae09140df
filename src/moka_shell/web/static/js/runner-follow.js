// The Tool runner keeps its newest result in sight while it grows: the entry lands at the top of the
// results, then its text, its view's card and the view itself arrive and resize, which on a short
// window (the form stacked above the results, 800×700) left the view below the fold with nothing
// scrolling to it. Until the person scrolls themselves, or another run starts, each change of the
// entry's size brings it into view again: wholly if it fits, else from its top.

let following = null; // {el, observer}

/** Follow `el` (a new result entry) in its scroller; the previous one is let go. */
export function followEntry(el) {
  stopFollowing();
  const scroller = el.closest(".screen-scroll");
  if (!scroller) return;
  const observer = new ResizeObserver(() => bringIntoView(el, scroller));
  observer.observe(el);
  following = { el, observer, scroller }; // its first report comes at once: the entry as it lands
}

/** The person moved the page themselves: their position wins from now on. */
export function stopFollowing() {
  following?.observer.disconnect();
  following = null;
}

function bringIntoView(el, scroller) {
  if (!el.isConnected) return stopFollowing();
  const box = scroller.getBoundingClientRect();
  const r = el.getBoundingClientRect();
  if (r.top >= box.top && r.bottom <= box.bottom) return; // already wholly in sight
  // Instantly: a smooth scroll still under way would be cut short by the next size change.
  el.scrollIntoView({ block: r.height > box.height ? "start" : "nearest" });
}

// What the person does to scroll: the wheel, a touch, a press on the scrollbar, the keys that scroll.
for (const type of ["wheel", "touchstart"]) document.addEventListener(type, () => stopFollowing(), { passive: true });
document.addEventListener("pointerdown", (e) => {
  if (following && e.target === following.scroller) stopFollowing();
});
document.addEventListener("keydown", (e) => {
  if (["PageUp", "PageDown", "Home", "End", "ArrowUp", "ArrowDown", " "].includes(e.key)) stopFollowing();
});
