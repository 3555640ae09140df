// The reference host for bench/appbridge_ref.py: the official ext-apps AppBridge mounting
// one app the way the spec's minimal host does (a fresh sandboxed iframe with the app's HTML,
// its message listener connected before the document loads). Bundled at test set-up time by
// scripts/setup.sh (esbuild from tests/npm) into bench/appbridge/dist/host.js; never vendored.
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

const HOST = { name: "moka-bench-appbridge-reference", version: "1.0.0" };
const CAPABILITIES = { openLinks: {}, serverTools: {}, logging: {} };
let current = null;

// The view's own tool calls get the same result the host got (the page has no MCP client).
function answerCalls(bridge, toolName, result) {
  bridge.oncalltool = async (params) =>
    params && params.name === toolName
      ? result
      : { content: [{ type: "text", text: "not in the reference" }], isError: true };
}

async function unmount() {
  if (!current) return;
  const { bridge, frame } = current;
  current = null;
  try {
    await bridge.close();
  } catch (_) {
    /* the frame may be gone already */
  }
  frame.remove();
}

// Mount a fresh view and resolve with times (ms from the mount) once it has the tool result.
window.benchMount = async function benchMount(html, toolName, args, result) {
  await unmount();
  const t0 = performance.now();
  const stamps = {};
  const bridge = new AppBridge(null, HOST, CAPABILITIES, {
    hostContext: { theme: "light", displayMode: "inline", platform: "desktop" },
  });
  answerCalls(bridge, toolName, result);
  const initialized = new Promise((resolve) => {
    bridge.oninitialized = () => {
      stamps.initialized = performance.now() - t0;
      resolve();
    };
  });
  const frame = document.createElement("iframe");
  frame.sandbox = "allow-scripts";
  frame.style.cssText = "width: 100%; height: 600px; border: 0";
  frame.srcdoc = html;
  document.body.appendChild(frame);
  current = { bridge, frame };
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  stamps.connected = performance.now() - t0;
  await initialized;
  await bridge.sendToolInput({ arguments: args });
  await bridge.sendToolResult(result);
  stamps.result_sent = performance.now() - t0;
  return stamps;
};

// The memory floor (bench/memory_floor.py): mount every view at once and keep them all live,
// one after another as a chat shows them; resolves once each has its tool result.
const kept = [];
window.benchMountAll = async function benchMountAll(docs) {
  for (const doc of docs) {
    const bridge = new AppBridge(null, HOST, CAPABILITIES, {
      hostContext: { theme: "light", displayMode: "inline", platform: "desktop" },
    });
    answerCalls(bridge, doc.tool, doc.result);
    const frame = document.createElement("iframe");
    frame.sandbox = "allow-scripts";
    frame.style.cssText = "display: block; width: 100%; height: 320px; border: 0";
    bridge.onsizechange = ({ height }) => {
      if (height) frame.style.height = `${height}px`; // as a host sizes an inline view
    };
    const initialized = new Promise((resolve) => {
      bridge.oninitialized = resolve;
    });
    frame.srcdoc = doc.html;
    document.body.appendChild(frame);
    kept.push({ bridge, frame });
    await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
    await initialized;
    await bridge.sendToolInput({ arguments: doc.args || {} });
    await bridge.sendToolResult(doc.result);
  }
  return kept.length;
};

window.benchUnmount = unmount;
window.benchReady = true;
