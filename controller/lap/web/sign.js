// The common progressive sign (controller/link/web/sign.html): every level's meter, the link's state
// (CLOSED when it is down or this screen lost the LAP), and each hit -- winning table, asset number,
// amount -- held on screen for hold_s seconds from the LAP's decision (at least that long from when
// this screen first showed it).  Values are put in with textContent only.
"use strict";
const $ = (id) => document.getElementById(id);
const money = (c) => "$" + Math.floor(c / 100).toLocaleString("en-US") + "." + String(c % 100).padStart(2, "0");
const shown = new Map();  // "level/order" -> {hit, until (this screen's clock)}
let lastMessage = 0, live = false, why = "";

function el(tag, cls, text, parent) {
  const e = document.createElement(tag); if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text; parent.appendChild(e); return e;
}
function levels(p) {
  const box = $("levels");
  if (box.children.length !== p.levels.length) {
    box.replaceChildren();
    for (const l of p.levels) { const d = el("div", "lv" + (p.levels.length === 1 ? " one" : ""), undefined, box);
      d.dataset.level = l.level; el("div", "name", l.level, d); el("div", "amt", "", d); }
  }
  p.levels.forEach((l, i) => { const a = box.children[i].querySelector(".amt");
    if (a.dataset.cents !== String(l.cents)) { a.textContent = money(l.cents); a.dataset.cents = String(l.cents); } });
}
function winners(p) {
  const now = Date.now();
  for (const h of p.hits) {
    const key = `${h.level}/${h.order}`, left = p.hold_s - (p.now - h.decided_at);
    if (!shown.has(key) && left > 0) shown.set(key, {hit: h, until: now + p.hold_s * 1000, at: now});
  }
  drawWinners();
}
function drawWinners() {
  const now = Date.now(), box = $("winners");
  for (const [k, v] of shown) if (v.until < now) shown.delete(k);
  const keys = [...shown.keys()].join(",");
  if (box.dataset.keys === keys) return;
  box.dataset.keys = keys; box.replaceChildren();
  for (const [k, v] of [...shown].reverse().slice(0, 3)) {
    const h = v.hit, w = el("div", "win", undefined, box);
    w.dataset.hit = k; w.dataset.table = h.table; w.dataset.shownAt = String(v.at);
    el("div", "head", `${h.level.toUpperCase()} WINNER`, w);
    const who = el("div", undefined, undefined, w);
    el("div", "who", `TABLE ${h.table}`, who); el("div", "asset", `ASSET ${h.asset || "?"}`, who);
    el("div", "amt", money(h.cents), w);
  }
}
function state() {
  const stale = Date.now() - lastMessage > 5000;
  const closed = !live || stale;
  $("closed").hidden = !closed;
  $("closedwhy").textContent = stale ? "no word from the progressive controller" : why;
  document.body.dataset.state = closed ? "closed" : "open";
}
function render(p) {
  lastMessage = Date.now(); live = p.live;
  why = p.live ? "" : (p.link_state === "running" ? "the controller's heartbeat stopped" : `the link is ${p.link_state}`);
  if (p.error) { live = false; why = "the progressive controller cannot be read"; state(); return; }
  levels(p); winners(p); state();
  document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + 1);
}
const es = new EventSource("/sign/events");
es.onmessage = (e) => render(JSON.parse(e.data));
setInterval(() => { drawWinners(); state(); }, 500);
state();
