// Moka's icon set: simple line drawings on a 24×24 grid, built as SVG elements (no markup
// strings). Each icon is a list of [tag, attributes] shapes stroked with currentColor.

const SVG = "http://www.w3.org/2000/svg";

const ICONS = {
  // Chat: a rounded speech bubble with a tail and two lines of "text".
  chat: [
    ["path", { d: "M5 5.5h14a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2h-8l-4.5 3.5v-3.5H5a2 2 0 0 1-2-2v-8a2 2 0 0 1 2-2z" }],
    ["path", { d: "M7.5 10h9M7.5 13.5h6" }],
  ],
  // Tool runner: a play triangle inside a rounded square.
  runner: [
    ["rect", { x: 3, y: 3.5, width: 18, height: 17, rx: 3 }],
    ["path", { d: "M10 8.5v7l6-3.5z" }],
  ],
  // Servers: two stacked units with status lights.
  servers: [
    ["rect", { x: 3.5, y: 4, width: 17, height: 7, rx: 2 }],
    ["rect", { x: 3.5, y: 13, width: 17, height: 7, rx: 2 }],
    ["path", { d: "M7 7.5h.01M7 16.5h.01M11 7.5h6M11 16.5h6" }],
  ],
  // Inspector: a pulse line through a frame, like a signal trace.
  inspector: [
    ["rect", { x: 3, y: 4, width: 18, height: 16, rx: 2.5 }],
    ["path", { d: "M6 12.5h3l1.8-4 2.6 8 1.8-4H18" }],
  ],
  // Settings: sliders (clearer than a gear at small sizes).
  settings: [
    ["path", { d: "M4 7h9M17 7h3M4 17h3M11 17h9M4 12h5M13 12h7" }],
    ["circle", { cx: 15, cy: 7, r: 2 }],
    ["circle", { cx: 9, cy: 17, r: 2 }],
    ["circle", { cx: 11, cy: 12, r: 2 }],
  ],
  // Brand mark: a cup with steam.
  logo: [
    ["path", { d: "M5 10h11v4.5a4.5 4.5 0 0 1-4.5 4.5h-2A4.5 4.5 0 0 1 5 14.5z" }],
    ["path", { d: "M16 11.5h1.5a2.25 2.25 0 0 1 0 4.5H16" }],
    ["path", { d: "M8.5 4.5c-.7 1 .7 2-.1 3M12 4.5c-.7 1 .7 2-.1 3" }],
  ],
  plus: [["path", { d: "M12 5v14M5 12h14" }]],
  search: [
    ["circle", { cx: 11, cy: 11, r: 6.5 }],
    ["path", { d: "M16 16l4.5 4.5" }],
  ],
  send: [["path", { d: "M12 19V5M6 11l6-6 6 6" }]],
  stop: [["rect", { x: 7, y: 7, width: 10, height: 10, rx: 1.5, fill: "currentColor" }]],
  close: [["path", { d: "M6 6l12 12M18 6L6 18" }]],
  more: [["path", { d: "M6 12h.01M12 12h.01M18 12h.01", "stroke-width": 2.6 }]],
  trash: [["path", { d: "M4.5 7h15M10 7V4.5h4V7M6.5 7l1 12.5h9l1-12.5M10 11v5M14 11v5" }]],
  edit: [
    ["path", { d: "M14.5 5.5l4 4L9 19H5v-4z" }],
    ["path", { d: "M12.5 7.5l4 4" }],
  ],
  download: [["path", { d: "M12 4v11M7 10.5l5 5 5-5M5 19.5h14" }]],
  upload: [["path", { d: "M12 16V5M7 9.5l5-5 5 5M5 19.5h14" }]],
  // Attach: a paper clip.
  paperclip: [
    [
      "path",
      { d: "M20 11.5l-7.8 7.8a5 5 0 0 1-7.1-7.1l8.2-8.2a3.3 3.3 0 0 1 4.7 4.7l-8.2 8.2a1.7 1.7 0 0 1-2.4-2.4l7.5-7.5" },
    ],
  ],
  copy: [
    ["rect", { x: 8.5, y: 8.5, width: 11, height: 11, rx: 2 }],
    ["path", { d: "M15.5 8.5V6.5a2 2 0 0 0-2-2h-7a2 2 0 0 0-2 2v7a2 2 0 0 0 2 2h2" }],
  ],
  check: [["path", { d: "M5 12.5l4.5 4.5L19 7.5" }]],
  chevron: [["path", { d: "M9 6l6 6-6 6" }]],
  chevronDown: [["path", { d: "M6 9l6 6 6-6" }]],
  // Display modes.
  inline: [
    ["rect", { x: 3.5, y: 5, width: 17, height: 14, rx: 2 }],
    ["path", { d: "M7 9.5h10M7 13h10M7 16.5h6" }],
  ],
  fullscreen: [["path", { d: "M4 9V4h5M15 4h5v5M20 15v5h-5M9 20H4v-5" }]],
  pip: [
    ["rect", { x: 3, y: 4.5, width: 18, height: 15, rx: 2 }],
    ["rect", { x: 12, y: 12, width: 6.5, height: 5, rx: 1, fill: "currentColor" }],
  ],
  // A plugin's display mode that brings no icon of its own: a frame split into panels.
  mode: [
    ["rect", { x: 3.5, y: 4.5, width: 17, height: 15, rx: 2 }],
    ["path", { d: "M13.5 4.5v15M13.5 12h7" }],
  ],
  popout: [
    ["path", { d: "M13 4.5h6.5V11M19.5 4.5L11 13" }],
    ["path", { d: "M17 14v4.5a1.5 1.5 0 0 1-1.5 1.5h-10A1.5 1.5 0 0 1 4 18.5v-10A1.5 1.5 0 0 1 5.5 7H10" }],
  ],
  restart: [
    ["path", { d: "M19 12a7 7 0 1 1-2.05-4.95" }],
    ["path", { d: "M19.5 4.5V9H15" }],
  ],
  power: [
    ["path", { d: "M12 3.5v8" }],
    ["path", { d: "M7.2 6.5a7 7 0 1 0 9.6 0" }],
  ],
  alert: [
    ["path", { d: "M12 4l9 16H3z" }],
    ["path", { d: "M12 10v4.5M12 17.5h.01" }],
  ],
  info: [
    ["circle", { cx: 12, cy: 12, r: 8.5 }],
    ["path", { d: "M12 11v5.5M12 7.8h.01" }],
  ],
  external: [["path", { d: "M14 5h5v5M19 5l-8 8M17 14v4a1 1 0 0 1-1 1H6a1 1 0 0 1-1-1V8a1 1 0 0 1 1-1h4" }]],
  sun: [
    ["circle", { cx: 12, cy: 12, r: 4 }],
    [
      "path",
      {
        d: "M12 2.5v2M12 19.5v2M2.5 12h2M19.5 12h2M5.3 5.3l1.4 1.4M17.3 17.3l1.4 1.4M5.3 18.7l1.4-1.4M17.3 6.7l1.4-1.4",
      },
    ],
  ],
  moon: [["path", { d: "M19.5 14.5A8 8 0 0 1 9.5 4.5a8 8 0 1 0 10 10z" }]],
  monitor: [
    ["rect", { x: 3, y: 4.5, width: 18, height: 12, rx: 2 }],
    ["path", { d: "M9 20h6M12 16.5V20" }],
  ],
  sparkle: [
    ["path", { d: "M12 3.5l1.8 5.2 5.2 1.8-5.2 1.8L12 17.5l-1.8-5.2L5 10.5l5.2-1.8z" }],
    ["path", { d: "M18.5 16v4M16.5 18h4" }],
  ],
  tool: [["path", { d: "M14.5 6.5a4 4 0 0 0 5 5l-8.5 8.5a2.1 2.1 0 0 1-3-3l8.5-8.5a4 4 0 0 1-2-2z" }]],
  app: [
    ["rect", { x: 3.5, y: 4, width: 17, height: 16, rx: 2.5 }],
    ["path", { d: "M3.5 8.5h17M6.5 6.25h.01M9 6.25h.01" }],
  ],
  key: [
    ["circle", { cx: 8, cy: 15, r: 4 }],
    ["path", { d: "M11 12l8.5-8.5M16 7l2.5 2.5M14 9l2 2" }],
  ],
  shield: [
    ["path", { d: "M12 3.5l7 3v5c0 4.5-3 7.8-7 9-4-1.2-7-4.5-7-9v-5z" }],
    ["path", { d: "M9 12l2.2 2.2L15.5 10" }],
  ],
  palette: [
    [
      "path",
      {
        d:
          "M12 3.5a8.5 8.5 0 1 0 0 17c1.2 0 1.8-.8 1.8-1.7 0-1.3-1.3-1.6-1.3-2.8 " +
          "0-1 .8-1.7 1.8-1.7h2.2a4 4 0 0 0 4-4C20.5 6.7 16.7 3.5 12 3.5z",
      },
    ],
    ["path", { d: "M7.5 11.5h.01M9.5 7.5h.01M14 7h.01M17 10h.01", "stroke-width": 2.4 }],
  ],
  filter: [["path", { d: "M4 5.5h16l-6 7v6l-4-2v-4z" }]],
  pause: [["path", { d: "M9 5.5v13M15 5.5v13" }]],
  play: [["path", { d: "M8 5.5v13l10-6.5z" }]],
  folder: [["path", { d: "M3.5 7a2 2 0 0 1 2-2h4l2 2.5h7a2 2 0 0 1 2 2V17a2 2 0 0 1-2 2h-13a2 2 0 0 1-2-2z" }]],
  link: [
    [
      "path",
      { d: "M10 14a4 4 0 0 0 5.7 0l3-3a4 4 0 0 0-5.7-5.7l-1 1M14 10a4 4 0 0 0-5.7 0l-3 3a4 4 0 0 0 5.7 5.7l1-1" },
    ],
  ],
  message: [["path", { d: "M4 6a2 2 0 0 1 2-2h12a2 2 0 0 1 2 2v9a2 2 0 0 1-2 2H9l-5 3.5z" }]],
  dice: [
    ["rect", { x: 4, y: 4, width: 16, height: 16, rx: 3.5 }],
    ["path", { d: "M8.5 8.5h.01M15.5 8.5h.01M12 12h.01M8.5 15.5h.01M15.5 15.5h.01", "stroke-width": 2.6 }],
  ],
};

/** An <svg> for `name`; decorative (aria-hidden) because buttons carry their own labels. */
/**
 * An icon as an <svg>: `name` is one of ICONS, or `{ d }` with SVG path data on the same 24×24 grid
 * (a plugin's display mode brings its own; the core checked it is path data).
 */
export function icon(name, { size = 18, className = "" } = {}) {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("width", size);
  svg.setAttribute("height", size);
  svg.setAttribute("fill", "none");
  svg.setAttribute("stroke", "currentColor");
  svg.setAttribute("stroke-width", "1.75");
  svg.setAttribute("stroke-linecap", "round");
  svg.setAttribute("stroke-linejoin", "round");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  svg.setAttribute("class", `icon ${className}`.trim());
  const shapes = typeof name === "object" && name?.d ? [["path", { d: name.d }]] : ICONS[name] || ICONS.info;
  for (const [tag, attrs] of shapes) {
    const shape = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) shape.setAttribute(k, v);
    svg.append(shape);
  }
  return svg;
}

export const hasIcon = (name) => Object.hasOwn(ICONS, name);
