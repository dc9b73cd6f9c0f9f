// The common progressive sign (controller/lap/web/sign.html): the game's name, every level's meter,
// the progressive wager's pay table (a meter pay shown with what it pays now), an attract rotation
// between hits (the last winner, how to play), and each hit celebrated full screen -- the winning
// table, seat, hand and amount -- for hold_s seconds from when this screen first showed it, then back
// to the meters.  CLOSED over everything when the link is down or this screen lost the LAP.  Values
// are put in with textContent only.
"use strict";
const $ = (id) => document.getElementById(id);
const money = (c) => "$" + Math.floor(c / 100).toLocaleString("en-US") + "." + String(c % 100).padStart(2, "0");
const shown = new Map();  // "level/order" -> {hit, at, until} (this screen's clock)
const ROTATE_MS = 8000;
let lastMessage = 0, live = false, why = "", picture = null, slide = 0, slideAt = 0;

function el(tag, cls, text, parent) {
  const e = document.createElement(tag); if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text); if (parent) parent.appendChild(e); return e;
}
const jackpotWord = (p, level) => p.levels.length === 1 ? "JACKPOT" : String(level).toUpperCase();
const when = (t) => new Date(t * 1000).toLocaleTimeString("en-US", {hour: "numeric", minute: "2-digit"});

function header(p) {
  $("game").textContent = p.title || "Progressive";
  $("closedgame").textContent = p.title || "";
  $("kicker").textContent = p.levels.length === 1 ? "PROGRESSIVE JACKPOT" : "PROGRESSIVE JACKPOTS";
  document.title = (p.title || "Progressive") + " jackpot";
}
function meters(p) {
  const box = $("meters");
  if (box.children.length !== p.levels.length) {
    box.replaceChildren();
    for (const l of p.levels) {
      const d = el("div", "lv" + (p.levels.length > 1 ? " many" : ""), undefined, box);
      d.dataset.level = l.level;  // one level: the kicker above says what it is; several: each is named
      if (p.levels.length > 1) el("div", "name", jackpotWord(p, l.level), d);
      el("div", "amt", "", d);
    }
  }
  p.levels.forEach((l, i) => { const a = box.children[i].querySelector(".amt");
    if (a.dataset.cents !== String(l.cents)) { a.textContent = money(l.cents); a.dataset.cents = String(l.cents); } });
}
// the pay table: a meter pay with what it pays now (its share of the first level's meter)
function pays(p) {
  const box = $("pays"), first = p.levels[0];
  $("payhead").textContent = p.wager_cents ? `PAYS ON A ${money(p.wager_cents).replace(".00", "")} PROGRESSIVE WAGER`
    : "PROGRESSIVE PAYS";
  $("paytable").hidden = !p.pays.length;
  if (box.children.length !== p.pays.length) {
    box.replaceChildren();
    p.pays.forEach((x, i) => { const r = el("div", "pay" + (i === 0 ? " top" : ""), undefined, box);
      el("span", "hand", x.hand, r); el("span", "what", "", r); el("span", "val", "", r); });
  }
  p.pays.forEach((x, i) => {
    const r = box.children[i];
    if (x.share && first) {
      r.children[1].textContent = x.share[0] === x.share[1] ? `the ${jackpotWord(p, first.level).toLowerCase()}`
        : `${Math.round(100 * x.share[0] / x.share[1] * 1000) / 1000}%`;
      r.children[2].textContent = money(Math.floor(first.cents * x.share[0] / x.share[1]));
    } else if (x.cents !== null) { r.children[1].textContent = ""; r.children[2].textContent = money(x.cents).replace(/\.00$/, ""); }
    else { r.children[1].textContent = ""; r.children[2].textContent = x.text; }
  });
}

// ---------------------------------------------------------------------------- the attract rotation
function slides(p) {
  const out = [];
  const top = p.pays[0];
  if (p.last) out.push(["last", "LAST WINNER", money(p.last.cents), `TABLE ${p.last.table} \u00b7 SEAT ${p.last.seat ?? "?"}`,
    `${p.last.hand || ""}${p.last.hand ? " \u00b7 " : ""}${when(p.last.decided_at)}`]);
  out.push(["play", "HOW TO PLAY", p.wager_cents ? `${money(p.wager_cents).replace(".00", "")} ON THE PROGRESSIVE` : "THE PROGRESSIVE",
    "before the dealer calls NO MORE BETS", top ? `${top.hand} wins ${top.share && top.share[0] === top.share[1] ? "the jackpot" : top.text}` : ""]);
  out.push(["grow", "THE JACKPOT GROWS", "WITH EVERY WAGER", "at every table on the link", "win it at any of them"]);
  return out;
}
function attract() {
  if (!picture) return;
  const all = slides(picture), box = $("attract"), now = Date.now();
  if (now - slideAt >= ROTATE_MS || box.dataset.n !== String(all.length)) {
    slide = (slide + (slideAt ? 1 : 0)) % all.length; slideAt = now;
  }
  const s = all[slide % all.length], key = s.join("|");
  if (box.dataset.key === key) return;
  box.dataset.key = key; box.dataset.n = String(all.length); box.dataset.slide = s[0]; box.replaceChildren();
  const d = el("div", "slide", undefined, box);
  el("div", "k", s[1], d); el("div", "b", s[2], d); el("div", "m", s[3], d); el("div", "s", s[4], d);
  const dots = el("div", "dots", undefined, box);
  all.forEach((_, i) => el(i === slide % all.length ? "b" : "span", undefined, "\u25cf", dots));
}
function lastWinnerFirst() { slideAt = Date.now(); slide = 0; }

// ---------------------------------------------------------------------------- the celebration
function winners(p) {
  const now = Date.now();
  for (const h of p.hits) {  // held hold_s from the LAP's decision (a screen started meanwhile: the rest of it)
    const key = `${h.level}/${h.order}`, left = p.hold_s - Math.max(p.now - h.decided_at, 0);
    if (!shown.has(key) && left > 0) shown.set(key, {hit: h, until: now + left * 1000, at: now});
  }
  celebrate();
}
function celebrate() {
  const now = Date.now(), box = $("celebrate");
  let ended = false;
  for (const [k, v] of shown) if (v.until < now) { shown.delete(k); ended = true; }
  if (ended && !shown.size) lastWinnerFirst();
  const keys = [...shown.keys()].join(",");
  box.hidden = !shown.size;
  document.body.dataset.celebrating = shown.size ? "yes" : "no";
  if (box.dataset.keys === keys) return;
  box.dataset.keys = keys; box.replaceChildren();
  const list = [...shown].reverse();  // the newest first
  if (!list.length || !picture) return;
  const [k, v] = list[0], h = v.hit;
  const w = el("div", "win", undefined, box);
  w.dataset.hit = k; w.dataset.table = h.table; w.dataset.shownAt = String(v.at);
  // the whole meter: a jackpot; a share of it (a royal flush's 10 %): a progressive winner
  el("div", "k", `\u2605 ${h.full ? jackpotWord(picture, h.level) : "PROGRESSIVE"} WINNER \u2605`, w);
  if (h.hand) el("div", "hand", h.hand, w);
  el("div", "amt", money(h.cents), w);
  el("div", "who", `TABLE ${h.table}` + (h.seat ? ` \u00b7 SEAT ${h.seat}` : ""), w);
  if (h.asset) el("div", "asset", `ASSET ${h.asset}`, w);
  for (const [k2, v2] of list.slice(1, 3)) {
    const a = el("div", "also win", `ALSO: TABLE ${v2.hit.table} \u00b7 SEAT ${v2.hit.seat ?? "?"} \u00b7 ${money(v2.hit.cents)}`, box);
    a.dataset.hit = k2; a.dataset.table = v2.hit.table; a.dataset.shownAt = String(v2.at);
  }
}

// ---------------------------------------------------------------------------- the link's state
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
  picture = p;
  header(p); meters(p); pays(p); winners(p); attract(); state();
  document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + 1);
}
const es = new EventSource("/sign/events");
es.onmessage = (e) => render(JSON.parse(e.data));
setInterval(() => { celebrate(); attract(); state(); }, 500);
state();
