// The Chat screen: conversation threads, tool-call cards with their views mounted underneath,
// model-context markers, errors in place, Stop, and the events from the core. A message is
// messages.js (text, attachments, Copy / Edit / Regenerate / Continue); the box you type
// in is composer.js.

import { api } from "../api.js";
import { h, clear } from "../dom.js";
import { icon } from "../icons.js";
import { button, toast, toastError } from "../ui.js";
import { createToolCard, updateToolCard, toolCardViews } from "../toolcard.js";
import { createSidebar } from "./conversations.js";
import { renderWelcome } from "./welcome.js";
import { reopen } from "../views/host.js";
import { errorBlock, contextMarker, textOf } from "./parts.js";
import { store } from "../store.js";
import { createComposer } from "./composer.js";
import { createModelPicker } from "./model-picker.js";
import { attachMenus } from "./composer-menu.js";
import {
  ensureMsg,
  setText,
  setAttachments,
  initMessages,
  refreshActions,
  renderActions,
  interruptedNote,
} from "./messages.js";
import { initThreadWindow, fetchNewest, begin, check, toNewest, noteAnchor, holdAnchor } from "./thread-window.js";
import { afterTruncate, noteLive } from "./history-window.js";
import { SCREEN_INFO } from "../screens.js";

const convs = new Map(); // conversationId -> Conv (threads stay in the DOM so their views live on)
let draft = null; // the unsent "new chat" thread
let pendingNew = null; // a draft whose first chat.send has not told us its id yet
let active = null;
let ctx, sidebar, scroller, threads, composer, picker, jumpBtn;
let stick = true; // follow new content while the person is at the bottom
let placing = false; // a page of stored messages is being rendered

class Conv {
  constructor(id) {
    this.id = id;
    this.el = h("div", {
      class: "thread",
      "data-conv-id": id || "new",
      role: "log",
      "aria-live": "polite",
      hidden: true,
    });
    this.msgs = new Map(); // messageId -> {el, body, tools, role, text}
    this.cards = new Map(); // callId -> tool card
    this.running = false;
    this.loaded = !id;
    threads.append(this.el);
  }
}

// ---- threads -------------------------------------------------------------------------------

function show(conv) {
  active = conv;
  for (const c of [...convs.values(), draft]) if (c) c.el.hidden = c !== conv;
  sidebar.setActive(conv.id);
  ctx.setSubtitle(conv.id ? sidebar.titleOf(conv.id) || "" : "New conversation");
  if (!conv.id) renderDraftWelcome();
  picker.close();
  picker.sync();
  syncComposer();
  jumpBtn.hidden = true;
  // A fresh chat shows its welcome from the top; a conversation opens at its newest message.
  stick = Boolean(conv.id || conv.msgs.size);
  if (conv.win?.hasNewer) jumpToLatest();
  else if (stick) scrollToEnd();
  else scroller.scrollTop = 0;
  requestAnimationFrame(() => check(conv)); // a thread shorter than the window's edge fetches on
}

function newChat() {
  if (!draft || pendingNew === draft) draft = new Conv(null);
  show(draft);
  composer.focus();
}

function renderDraftWelcome() {
  if (!draft || draft.msgs.size) return;
  clear(draft.el).append(renderWelcome({ navigate: ctx.navigate }));
}

async function open(id) {
  let conv = convs.get(id);
  if (!conv) conv = await load(id);
  if (conv) show(conv);
}

/** Fetch and render a stored conversation once; concurrent callers share the request. */
function load(id) {
  let conv = convs.get(id);
  if (conv?.loaded) return Promise.resolve(conv);
  if (!conv) {
    conv = new Conv(id);
    convs.set(id, conv);
  }
  // A long conversation comes a page at a time: its newest messages now, the rest as the person scrolls.
  conv.loading ||= fetchNewest(id)
    .then((data) => {
      conv.settings = data?.settings || {};
      if (conv === active) picker.sync();
      begin(conv, data);
      if (data?.running) setRunning(conv, true);
      // The store keeps a waiting call's status, not its card: ask the core for the cards still open.
      if (data?.running)
        api
          .call("chat.approvals")
          .then((calls) => {
            for (const call of calls || []) if (conv.cards.has(call.id)) updateToolCard(conv.cards.get(call.id), call);
          })
          .catch(() => {});
      conv.loaded = true;
      return conv;
    })
    .catch((err) => {
      conv.el.append(errorBlock(err.message, "load", toSettings));
      conv.loaded = true;
      return conv;
    });
  return conv.loading;
}

/** The thread an event belongs to, adopting the pending draft for a brand-new id. */
function convFor(id) {
  if (!id) return null;
  if (convs.has(id)) return convs.get(id);
  if (pendingNew) return adopt(pendingNew, id);
  if (sidebar.knows(id)) {
    sidebar.refreshSoon();
    return null;
  } // not loaded: it renders fresh when opened
  const conv = new Conv(id);
  conv.loaded = true; // new to us: every message of it arrives as an event
  convs.set(id, conv);
  sidebar.refreshSoon();
  return conv;
}

function adopt(conv, id) {
  if (conv.id) return conv;
  conv.id = id;
  conv.el.dataset.convId = id;
  convs.set(id, conv);
  if (pendingNew === conv) pendingNew = null;
  if (draft === conv) draft = null;
  if (active === conv) sidebar.setActive(id);
  sidebar.refreshSoon();
  return conv;
}

// ---- messages ------------------------------------------------------------------------------

function addMessage(conv, m, { history = false, before = null } = {}) {
  if (!m || m.role === "tool") return; // tool results are shown inside their tool-call cards
  const text = textOf(m.content);
  if (!history) conv.win = noteLive(conv.win, m.seq);
  if (m.role === "user" && m.source !== "app" && conv.pendingUser && !history) {
    // The core confirms the message we showed while sending: give it its real id.
    const p = conv.pendingUser;
    conv.pendingUser = null;
    conv.msgs.delete(p.id);
    p.el.dataset.messageId = m.id;
    p.el.classList.remove("pending");
    p.id = m.id;
    p.seq = m.seq;
    conv.msgs.set(m.id, p);
    renderActions(p);
    return;
  }
  const msg = ensureMsg(conv, m.id, m.role, m.source, m.data?.app, history ? { before, seq: m.seq } : null);
  msg.source = m.source;
  if (Number.isFinite(m.seq)) msg.seq = m.seq;
  // An empty assistant message during a turn is the start of a reply: it streams next.
  msg.streaming = !history && m.role === "assistant" && !text && conv.running;
  if (text || !msg.text || m.edited) setText(msg, text);
  if (m.data?.attachments && !msg.hasFiles) setAttachments(msg, m.data.attachments);
  for (const call of m.toolCalls || []) upsertCall(conv, m.id, call, { history });
  if (m.views && history) for (const v of m.views) storedView(conv, msg, v);
  if (history && m.interrupted) interruptedNote(msg, { canContinue: true });
  else if (history && m.error === "interrupted") interruptedNote(msg, { canContinue: false });
  else if (m.error && history)
    msg.el.after(
      errorBlock(
        typeof m.error === "string" ? m.error : m.error.message,
        m.error === "stopped" ? "stopped" : "turn",
        toSettings,
      ),
    );
  if (history) return; // a page of them is finished by chat/thread-window.js
  refreshActions(conv);
  follow();
}

/** The core replaced what came after a message (an edit or a regenerate): those turns leave the thread. */
function truncateAfter(conv, messageId) {
  const kept = conv.msgs.get(messageId);
  const anchor = kept?.el;
  if (!anchor || kept.out) {
    if (conv.win) toNewest(conv).catch(toastError); // edited elsewhere, outside what is shown
    return;
  }
  conv.win = afterTruncate(conv.win, kept.seq);
  let node = anchor.nextElementSibling;
  while (node) {
    const next = node.nextElementSibling;
    const id = node.dataset.messageId;
    if (id) {
      const msg = conv.msgs.get(id);
      for (const card of msg?.tools?.querySelectorAll(".tool-card") || []) conv.cards.delete(card.dataset.callId);
      conv.msgs.delete(id);
    }
    node.remove();
    node = next;
  }
  for (const [callId, card] of conv.cards) if (!card.isConnected) conv.cards.delete(callId);
  refreshActions(conv);
}

function upsertCall(conv, messageId, call, { history = false } = {}) {
  let card = conv.cards.get(call.id);
  if (!card) {
    card = createToolCard(call);
    conv.cards.set(call.id, card);
    ensureMsg(conv, messageId || `call-${call.id}`, "assistant").tools.append(card);
  } else updateToolCard(card, call);
  if (history && call.recordId && !(call.viewId && ctx.views.has(call.viewId))) storedView(conv, null, call, card);
  follow();
  return card;
}

/** A view kept with the conversation but not running now: offer to open it again. */
function storedView(conv, msg, v, card) {
  if (!v.recordId || conv.el.querySelector(`.view-closed-note[data-record-id="${CSS.escape(v.recordId)}"]`)) return;
  const target = card ? toolCardViews(card) : msg.tools;
  target.append(
    h(
      "div",
      { class: "view-closed-note", "data-record-id": v.recordId },
      icon("app", { size: 14 }),
      h("span", { text: `App view${v.tool ? ` from ${v.tool}` : ""}` }),
      button("Open view", { small: true, variant: "ghost", onclick: () => reopen(v.recordId) }),
    ),
  );
}

const toSettings = () => ctx.navigate("settings");

// ---- scrolling -----------------------------------------------------------------------------

function scrollToEnd() {
  scroller.scrollTop = scroller.scrollHeight;
}
// New content while the person reads further up: offer a way down instead of yanking the page.
function follow() {
  if (placing) return; // stored messages placed above or below what is read move nothing
  if (stick && !active?.win?.hasNewer) requestAnimationFrame(scrollToEnd);
  else jumpBtn.hidden = false;
}

/** The Latest button: the newest message, fetched first when the thread shows an older stretch. */
async function jumpToLatest({ smooth = false } = {}) {
  const conv = active;
  jumpBtn.hidden = true;
  if (conv?.win?.hasNewer) {
    await toNewest(conv).catch(toastError);
    if (conv !== active) return;
    refreshActions(conv);
  }
  stick = true;
  if (smooth && !conv?.win?.hasNewer) scroller.scrollTo({ top: scroller.scrollHeight, behavior: "smooth" });
  else scrollToEnd();
}

// ---- composer ------------------------------------------------------------------------------

function setRunning(conv, running) {
  conv.running = running;
  if (!running)
    for (const msg of conv.msgs.values())
      if (msg.streaming) {
        msg.streaming = false;
        setText(msg, msg.text);
      }
  refreshActions(conv);
  if (conv === active) syncComposer();
}

function syncComposer() {
  composer.setRunning(Boolean(active?.running));
}

async function send(text, files) {
  const conv = active;
  if ((!text && !files.length) || !conv || conv.running) return;
  if (conv.win?.hasNewer) await jumpToLatest(); // the answer comes at the end: show the end first
  if (!conv.id) pendingNew = conv;
  const tempId = `pending-${Date.now()}`;
  const msg = ensureMsg(conv, tempId, "user");
  msg.el.classList.add("pending");
  setText(msg, text);
  if (files.length) setAttachments(msg, files);
  conv.pendingUser = msg;
  setRunning(conv, true);
  stick = true;
  follow();
  const params = { text, ...(conv.id ? { conversationId: conv.id } : {}) };
  if (!conv.id) {
    // A new chat: the model and system prompt picked before it existed become the conversation's own.
    const chosen = picker.takeDraft();
    conv.settings = chosen;
    if (chosen.backend)
      Object.assign(params, { backend: chosen.backend, ...(chosen.model ? { model: chosen.model } : {}) });
    if (chosen.systemPrompt) params.systemPrompt = chosen.systemPrompt;
  }
  if (files.length) params.attachments = files.map(({ name, mimeType, data }) => ({ name, mimeType, data }));
  try {
    const res = await api.call("chat.send", params);
    if (res?.conversationId) adopt(conv, res.conversationId);
    if (conv === active) ctx.setSubtitle(sidebar.titleOf(conv.id) || text.slice(0, 60));
  } catch (err) {
    if (pendingNew === conv) pendingNew = null;
    setRunning(conv, false);
    conv.el.append(errorBlock(err.message, "send", toSettings));
    follow();
  }
}

// ---- events from the core -----------------------------------------------------------------

function onMessage(d) {
  const c = convFor(d?.conversationId);
  if (!c) return;
  addMessage(c, d.message);
  // An app can start or continue a conversation the person is not looking at: say where.
  if (d.message?.source === "app" && (c !== active || document.getElementById("screen-chat").hidden)) {
    toast("An app posted a message to the chat", {
      action: {
        label: "Open",
        onclick: () => {
          ctx.navigate("chat");
          open(c.id);
        },
      },
    });
  }
}

function onError(d) {
  const c = convFor(d?.conversationId);
  if (!c) return;
  // In place: right after the reply that failed (or at the end of the thread).
  const after = d.messageId && c.msgs.get(d.messageId)?.el;
  const block = errorBlock(d.message, d.kind, toSettings);
  if (after && after.parentNode === c.el) after.after(block);
  else if (!c.win?.hasNewer) c.el.append(block); // else it is with its message, fetched with it later
  setRunning(c, false);
  follow();
}

function onDelta(d) {
  const c = convFor(d?.conversationId);
  if (!c) return;
  const msg = ensureMsg(c, d.messageId, "assistant");
  msg.streaming = true;
  if (!c.running) setRunning(c, true);
  setText(msg, msg.text + (d.text || ""));
}

/** A call's card, new or changed (its status, its approval question). */
function onCall(d) {
  const c = convFor(d?.conversationId);
  if (c && d.call) upsertCall(c, d.messageId, d.call);
}

// An approval asked while the socket was down went to no page: the open ones come again.
function askApprovalsAgain() {
  api
    .call("chat.approvals")
    .then((calls) => {
      for (const call of calls || []) {
        const c = convs.get(call.conversationId);
        if (c?.loaded) upsertCall(c, call.messageId, call);
      }
    })
    .catch(() => {});
}

function onDone(d) {
  const c = convFor(d?.conversationId);
  if (c) setRunning(c, false);
  sidebar.refresh().then(() => {
    if (active?.id) ctx.setSubtitle(sidebar.titleOf(active.id) || "");
  });
}

// Views created by a chat turn mount under their tool call.
async function placeView(data) {
  if (!data.conversationId) return null;
  const conv = convFor(data.conversationId) || (await load(data.conversationId));
  const card =
    conv.cards.get(data.callId) ||
    upsertCall(conv, data.messageId, { id: data.callId, server: data.server, tool: data.tool, status: "running" });
  return toolCardViews(card);
}

function wire() {
  api.on("chat.message", onMessage);
  api.on("chat.delta", onDelta);
  api.on("chat.truncated", (d) => {
    const c = convs.get(d?.conversationId);
    if (c) truncateAfter(c, d.afterMessageId);
  });
  api.on("chat.tool", onCall);
  api.on("chat.approval", onCall);
  api.on("api.reconnected", askApprovalsAgain);
  api.on("chat.context", (d) => {
    const c = convFor(d?.conversationId);
    if (!c || c.win?.hasNewer) return; // only a marker, and the thread shows an older stretch
    c.el.append(contextMarker(d));
    follow();
  });
  api.on("chat.error", onError);
  api.on("chat.done", onDone);
  ctx.views.addPlacer(placeView);
  const refreshWelcome = () => {
    if (active === draft) renderDraftWelcome();
  };
  store.on("tools", refreshWelcome);
  store.on("servers", refreshWelcome);
  store.on("settings", refreshWelcome);
}

function toggleSidebar(btn, open = !sidebar.el.classList.contains("open")) {
  sidebar.el.classList.toggle("open", open);
  (btn || document.getElementById("conv-toggle"))?.setAttribute("aria-expanded", String(open));
}

/** The scrolling thread area and its Latest button. */
function buildThread() {
  threads = h("div", { class: "threads" });
  scroller = h("div", { class: "chat-scroll", id: "chat-scroll" }, threads);
  // Only the person scrolling up unsticks the view: content growing below (a view resizing,
  // text streaming) moves the bottom away without moving scrollTop, and must not count.
  let lastTop = 0;
  scroller.addEventListener("scroll", () => {
    const top = scroller.scrollTop;
    if (top < lastTop - 2) stick = false;
    // The end of an older stretch is not the end of the conversation: more comes first.
    if (scroller.scrollHeight - top - scroller.clientHeight < 80 && !active?.win?.hasNewer) stick = true;
    lastTop = top;
    if (active?.win?.hasNewer)
      jumpBtn.hidden = false; // far from the newest: a way back there
    else if (stick) jumpBtn.hidden = true;
    if (!stick) noteAnchor(active);
    check(active);
  });
  // Anything that changes the thread's height keeps the newest content in sight, or, further up,
  // the message being read where it is.
  new ResizeObserver(() => {
    if (stick) scrollToEnd();
    else holdAnchor();
  }).observe(threads);
  jumpBtn = h(
    "button",
    {
      type: "button",
      class: "jump-latest",
      id: "jump-latest",
      hidden: true,
      onclick: () => jumpToLatest({ smooth: true }),
    },
    icon("chevronDown", { size: 15 }),
    h("span", { text: "Latest" }),
  );
}

/** Stored messages come a page at a time (chat/thread-window.js), rendered as history. */
function wireThreadWindow() {
  initThreadWindow({
    scroller,
    render: (conv, m, before) => {
      placing = true;
      try {
        addMessage(conv, m, { history: true, before });
      } finally {
        placing = false;
      }
    },
    rendered: (conv, placed) => {
      refreshActions(conv, placed);
      if (conv === active) requestAnimationFrame(() => check(conv)); // a short page: fetch on
    },
  });
}

// ---- screen --------------------------------------------------------------------------------

export default {
  ...SCREEN_INFO.chat,

  init(section, context) {
    ctx = context;
    sidebar = createSidebar({
      onOpen: (id) => {
        toggleSidebar(null, false);
        open(id);
      },
      onNew: () => {
        toggleSidebar(null, false);
        newChat();
      },
      onDeleted: (id) => {
        const conv = convs.get(id);
        if (conv) {
          conv.el.remove();
          convs.delete(id);
        }
        if (active === conv) newChat();
      },
      onRenamed: (id, title) => {
        if (active?.id === id) ctx.setSubtitle(title);
      },
    });
    buildThread();
    picker = createModelPicker({ getConv: () => active });
    composer = createComposer({
      tools: [picker.el],
      onSend: send,
      onStop: () => active?.id && api.call("chat.stop", { conversationId: active.id }).catch(toastError),
    });
    initMessages({ follow, isRunning: (conv) => Boolean(conv?.running) });
    wireThreadWindow();
    attachMenus(composer);
    section.append(sidebar.el, h("div", { class: "chat-main" }, scroller, jumpBtn, composer.el));
    document.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && sidebar.el.classList.contains("open") && !document.querySelector("dialog[open]"))
        toggleSidebar(null, false);
    });
    wire();
  },

  show() {
    if (!active) {
      sidebar.refresh();
      newChat();
    }
  },

  actions() {
    return [
      // Only shown when the window is too narrow for the sidebar (see chat.css).
      button("Conversations", {
        icon: "chat",
        variant: "ghost",
        small: true,
        id: "conv-toggle",
        "aria-expanded": "false",
        onclick: (e) => toggleSidebar(e.currentTarget),
      }),
      button("New chat", { icon: "plus", variant: "ghost", small: true, onclick: newChat, id: "chat-new" }),
    ];
  },

  subtitle: () => (active?.id ? sidebar.titleOf(active.id) || "" : active ? "New conversation" : ""),

  focusSearch() {
    if (window.matchMedia("(max-width: 860px)").matches) toggleSidebar(null, true);
    sidebar.focusSearch();
  },
};
