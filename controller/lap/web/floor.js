// The floor view (controller/link/web/floor.html).  Every value is put in with textContent, never as
// markup.  The picture arrives on /events (Server-Sent Events) as the LAP announces changes.
"use strict";
const $ = (id) => document.getElementById(id);
const CSRF = document.querySelector("meta[name=csrf]").content;
const money = (c) => (c < 0 ? "-" : "") + "$" + Math.floor(Math.abs(c) / 100).toLocaleString("en-US") + "." +
  String(Math.abs(c) % 100).padStart(2, "0");
const moneyShort = (c) => c >= 100000000 ? "$" + (c / 100000000).toFixed(2) + "M"
  : c >= 1000000 ? "$" + (c / 100000).toFixed(1) + "k" : "$" + Math.round(c / 100).toLocaleString("en-US");
const plural = (n, one, many) => n === 1 ? `1 ${one}` : `${n.toLocaleString("en-US")} ${many}`;
const DT = {month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false};
const when = (t) => t ? new Date(t * 1000).toLocaleString("en-US", DT) : "";
const whenY = (t) => t ? new Date(t * 1000).toLocaleString("en-US", {...DT, year: "numeric"}) : "";
const hhmm = (t) => new Date(t * 1000).toLocaleTimeString("en-US", {hour: "2-digit", minute: "2-digit", hour12: false});
const hhmmss = (t) => new Date(t * 1000).toLocaleTimeString("en-US", {hour12: false});
const ago = (s) => s === null ? "never" : s < 90 ? `${Math.round(s)} s ago` : s < 5400 ? `${Math.round(s / 60)} min ago`
  : `${(s / 3600).toFixed(1)} h ago`;
function el(tag, cls, text, parent) {
  const e = document.createElement(tag); if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text); if (parent) parent.appendChild(e); return e;
}
function cell(tr, text, cls) { return el("td", cls, text, tr); }
const isoDay = (d) => `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;

// ---------------------------------------------------------------------------- the chart (SVG)
const NS = "http://www.w3.org/2000/svg";
function svg(tag, attrs, parent, text) {
  const e = document.createElementNS(NS, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text; if (parent) parent.appendChild(e); return e;
}
function niceStep(span, n) {
  const raw = span / n, p = Math.pow(10, Math.floor(Math.log10(raw))), f = raw / p;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}
function timeStep(span) {
  for (const m of [1 / 6, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 180, 240, 360]) if (span / (m * 60) <= 6) return m * 60;
  return 720 * 60;
}
// the meter over the gaming day: a step line with axes (dollars, time of day) and the hits marked
function chart(lv, day, now) {
  const W = 760, H = 210, L = 72, R = 16, T = 22, B = 24;
  const s = svg("svg", {viewBox: `0 0 ${W} ${H}`, class: "chart", role: "img",
    "aria-label": `${lv.level} meter over the gaming day`});
  const pts = lv.chart; if (!pts.length) return s;
  // the time axis: from the first change of the day (not an empty morning) to now, at least a minute
  const changes = pts.filter((p, i) => i > 0 && p[1] !== pts[i - 1][1]).map(p => p[0]);
  const first = changes.length ? changes[0] : now;
  let t0 = Math.max(day, first - Math.max((now - first) * 0.1, 10));
  if (now - t0 < 60) t0 = Math.max(day, now - 60);
  const vals = pts.filter(p => p[0] >= t0).map(p => p[1]).concat(pts.filter(p => p[0] < t0).slice(-1).map(p => p[1]));
  let lo = Math.min(...vals), hi = Math.max(...vals);
  const pad = Math.max((hi - lo) * 0.12, 100);
  lo = Math.max(0, lo - pad); hi = hi + pad;
  const x = (t) => L + (W - L - R) * (Math.max(t, t0) - t0) / Math.max(now - t0, 1);
  const y = (v) => T + (H - T - B) * (1 - (v - lo) / (hi - lo));
  const step = niceStep(hi - lo, 4);
  for (let v = Math.ceil(lo / step) * step; v <= hi; v += step) {
    svg("line", {x1: L, x2: W - R, y1: y(v), y2: y(v), class: "grid"}, s);
    svg("text", {x: L - 6, y: y(v) + 4, "text-anchor": "end"}, s, moneyShort(v));
  }
  const ts = timeStep(now - t0);
  for (let t = Math.ceil(t0 / ts) * ts; t <= now; t += ts) {
    svg("line", {x1: x(t), x2: x(t), y1: T, y2: H - B, class: "grid"}, s);
    svg("text", {x: x(t), y: H - B + 15, "text-anchor": "middle"}, s, ts < 60 ? hhmmss(t) : hhmm(t));
  }
  svg("line", {x1: L, x2: L, y1: T, y2: H - B, class: "axis"}, s);
  svg("line", {x1: L, x2: W - R, y1: H - B, y2: H - B, class: "axis"}, s);
  let d = "", v0 = pts[0][1];
  for (const p of pts) { if (p[0] <= t0) { v0 = p[1]; continue; }
    d += d ? ` H${x(p[0]).toFixed(1)} V${y(p[1]).toFixed(1)}` : `M${L} ${y(v0).toFixed(1)} H${x(p[0]).toFixed(1)} V${y(p[1]).toFixed(1)}`; }
  if (!d) d = `M${L} ${y(v0).toFixed(1)}`;
  d += ` H${x(now).toFixed(1)}`;
  svg("path", {d: d + ` V${H - B} H${L} Z`, class: "area"}, s);
  svg("path", {d: d, class: "line"}, s);
  svg("text", {x: W - R - 4, y: y(lv.cents) > T + 30 ? y(lv.cents) - 8 : y(lv.cents) + 18, "text-anchor": "end",
    class: "now"}, s, "now " + money(lv.cents));
  // each hit marked; a label only where it does not run into the one before (the circle's title has all)
  let lastLabel = -1e9;
  for (const h of [...lv.hit_marks].sort((a, b) => a[0] - b[0])) { if (h[0] < t0) continue;
    const hx = x(h[0]), left = hx > W - R - 90;
    const c = svg("circle", {cx: hx.toFixed(1), cy: T - 10, r: 5, class: "hitmark"}, s);
    svg("title", {}, c, "hit " + money(h[1]) + " at " + when(h[0]));
    if (hx - lastLabel < 110) continue;
    lastLabel = hx;
    svg("text", {x: left ? hx - 8 : hx + 8, y: T - 6, class: "hitlabel", "text-anchor": left ? "end" : "start"}, s,
      "hit " + money(h[1])); }
  return s;
}

// ---------------------------------------------------------------------------- the alert
let sound = null, lastBeep = 0;
function beep() {
  if (!sound || sound.state !== "running") return;
  for (let i = 0; i < 3; i++) { const o = sound.createOscillator(), g = sound.createGain();
    o.frequency.value = 880; g.gain.value = 0.25; o.connect(g); g.connect(sound.destination);
    o.start(sound.currentTime + i * 0.3); o.stop(sound.currentTime + i * 0.3 + 0.18); }
  document.body.dataset.beeps = String(Number(document.body.dataset.beeps || 0) + 1);
}
function soundButton() {
  const on = sound && sound.state === "running";
  $("sound").textContent = on ? "Sound: on" : "Sound: off (click to enable)";
}
$("sound").addEventListener("click", () => {
  if (!sound) sound = new AudioContext();
  if (sound.state === "running") sound.suspend().then(soundButton); else sound.resume().then(soundButton);
});
try { sound = new AudioContext(); sound.resume().then(soundButton, soundButton); } catch (e) { sound = null; }
soundButton();

async function acknowledge(h, btn) {
  btn.disabled = true;
  const body = new URLSearchParams({level: h.level, order: String(h.order), csrf: CSRF});
  const r = await fetch("/api/ack", {method: "POST", body, headers: {"X-CSRF-Token": CSRF}, credentials: "same-origin"});
  if (!r.ok) { btn.disabled = false; $("problem").textContent = "acknowledge refused: " + (await r.text()); }
}
const slipHref = (h) => `/slip/${encodeURIComponent(h.level)}/${h.order}.pdf`;
function slipLink(h, parent) {
  const a = el("a", "slip", "Slip", parent); a.href = slipHref(h); a.title = "the payout slip (PDF) to print and sign";
  return a;
}
function alerts(p) {
  const box = $("alerts"); box.replaceChildren(); let fresh = 0;
  for (const h of p.hits.filter(h => h.pending)) {
    const a = el("div", "alert " + (h.ack_by ? "acked" : "new"), null, box); a.dataset.hit = `${h.level}/${h.order}`;
    el("span", "tag", h.ack_by ? "PENDING HIT" : "PENDING HIT \u2014 NOT ACKNOWLEDGED", a);
    const w = el("span", "what", null, a);
    el("b", null, money(h.cents), w);
    w.append(` Table ${h.table}` + (h.asset ? ` (${h.asset})` : "") + `, seat ${h.seat} \u2014 ${h.hand_name || h.hand}` +
      ` \u2014 round ${h.round} \u2014 decided ${when(h.decided_at)}` + (p.levels.length > 1 ? ` (${h.level})` : ""));
    if (h.ack_by) el("span", "muted", `acknowledged by ${h.ack_by} at ${when(h.ack_at)}; validation and payment at the table`, a);
    else { fresh++; const b = el("button", "ack", "Acknowledge", a); b.type = "button";
      b.addEventListener("click", () => acknowledge(h, b)); }
    slipLink(h, a);
  }
  if (fresh && Date.now() - lastBeep > 4000) { lastBeep = Date.now(); beep(); }
}
// ---------------------------------------------------------------------------- the technician's panel
// the database and the link's records: the heartbeat, the replication, reconciliation, refusals,
// recoveries (what the tables found of the LAP's memory): not the pit's business, a technician's
function technician(p) {
  const dl = $("techlist"); dl.replaceChildren();
  const row = (k, v) => { el("dt", null, k, dl); el("dd", null, v, dl); };
  row("Link state", p.link_state + (p.inoperable ? ` \u2014 ${p.inoperable}` : ""));
  row("LAP heartbeat", p.lap_heartbeat_s === null ? "none" : ago(p.lap_heartbeat_s));
  row("Replication", p.replication || "not checked yet");
  row("Active LAP", p.active_lap || "unknown");
  const tb = $("techtables"); tb.replaceChildren();
  for (const t of p.tables) {
    const tr = el("tr", null, null, tb);
    cell(tr, t.id); cell(tr, t.reconciled_seq ?? "", "num"); cell(tr, t.mismatch || "", "wrap");
    cell(tr, (p.closed_by_lap || {})[t.id] || "", "wrap");
  }
  const log = $("techlog"); log.replaceChildren();
  const items = [...(p.refusals || []).map(r => [r.at, r.table_id, `refused record ${r.seq} (${r.kind}): ${r.reason}`]),
    ...(p.recoveries || []).map(r => [r.at, r.table_id, `${r.kind}: ${r.detail}`])].sort((a, b) => b[0] - a[0]);
  for (const [at, t, what] of items.slice(0, 20)) { const tr = el("tr", null, null, log);
    cell(tr, when(at)); cell(tr, t || ""); cell(tr, what, "wrap"); }
  if (!items.length) cell(el("tr", null, null, log), "none", "muted");
  const recent = (p.recoveries || []).filter(r => p.now - r.at < 3600).length + (p.refusals || []).length;
  $("lapage").textContent = (p.lap_heartbeat_s === null ? "no LAP heartbeat" : `LAP heartbeat ${ago(p.lap_heartbeat_s)}`) +
    (recent ? ` \u00b7 ${plural(recent, "record", "records")} to look at` : "");
}

// ---------------------------------------------------------------------------- the picture
function levels(p) {
  const box = $("levels"); box.replaceChildren();
  for (const l of p.levels) {
    const d = el("div", "level", null, box); d.dataset.level = l.level;
    const head = el("div", null, null, d);
    el("div", "name", `${l.level} \u00b7 ${plural(l.hits, "hit", "hits")} in all`, head);
    const m = el("div", "meter", money(l.cents), head); m.dataset.cents = l.cents;
    const dl = el("dl", null, null, d);
    const row = (k, v) => { el("dt", null, k, dl); el("dd", null, v, dl); };
    row("Resets to", money(l.reset_cents) + " + reserve");
    row("Reserve", money(l.reserve_cents) + (l.reserve_rate !== "0%" ? ` (${l.reserve_rate} of wagers)` : ""));
    row("Limit", l.limit_cents === null ? "none" : `${money(l.limit_cents)} \u2014 ${money(l.to_limit_cents)} to go`);
    row("Increment", `${l.rate} of each wager` + (l.limit_cents !== null ? `; above the limit to the ${l.at_limit === "freeze" ? "overflow" : "reserve"}` : ""));
    if (l.overflow_cents) row("Overflow", money(l.overflow_cents));
    row("Seed", money(l.seed_cents));
    el("div", "chartbox", null, d).appendChild(chart(l, p.day_start, p.now));
  }
}
function tables(p) {
  const tb = $("tables"); tb.replaceChildren();
  for (const t of p.tables) {
    const tr = el("tr", "tablerow", null, tb); tr.dataset.table = t.id;
    const tilts = Object.entries(t.tilts).map(([k, v]) => k + ": " + v).join("; ");
    if (tilts || t.state === "tilt") tr.classList.add("tilt");
    cell(tr, t.id); cell(tr, t.asset); cell(tr, t.game_name || t.game);
    cell(tr, t.state_label, t.state === "tilt" ? "state-tilt" : ""); cell(tr, t.round ?? "", "num");
    cell(tr, t.open ? "open" : `closed (${t.reason})`, t.open ? "open" : "closed");
    cell(tr, t.sign || (t.open ? "meters" : ""), "wrap sign");
    const early = (n) => { const c = cell(tr, n ?? (t.played_s === null ? "\u2014" : "too early"), "num" + (n === null ? " muted" : ""));
      if (n === null && t.played_s !== null) c.title = `shown after ${Math.round(p.rates_after_s / 60)} minutes of play`; };
    cell(tr, money(t.coin_in_cents), "num"); cell(tr, t.wagers, "num"); early(t.wagers_per_hour);
    cell(tr, t.hands, "num"); early(t.hands_per_hour);
    cell(tr, tilts + (t.mismatch ? " mismatch: " + t.mismatch : ""), "wrap");
    cell(tr, ago(t.heard_s), t.heard_s === null || t.heard_s > 10 ? "old" : "");
  }
  $("daynote").textContent = `gaming day from ${whenY(p.day_start)}; rates per hour of play, once a table has played ` +
    `${Math.round(p.rates_after_s / 60)} minutes since its first progressive wager (before that they mean nothing)`;
}
function hitRows(hits, withYear) {
  const hb = $("hits"); hb.replaceChildren();
  for (const h of hits) {
    const tr = el("tr", "hitrow" + (h.pending ? " pending" : ""), null, hb);
    cell(tr, withYear ? whenY(h.decided_at) : when(h.decided_at)); cell(tr, h.level); cell(tr, h.order, "num");
    cell(tr, h.table + (h.asset ? ` (${h.asset})` : "")); cell(tr, h.round, "num"); cell(tr, h.seat, "num");
    cell(tr, h.hand_name || h.hand); cell(tr, money(h.cents), "num");
    cell(tr, h.pending ? "pending" + (h.ack_by ? `, acknowledged by ${h.ack_by}` : "")
      : `paid ${when(h.paid_at)}, validated by ${h.validated_by || "?"}`, "status");
    slipLink(h, cell(tr, ""));
  }
  if (!hits.length) cell(el("tr", null, null, hb), "no hits in this range", "muted");
}
let picture = null, historyRange = null;
function render(p) {
  if (p.error) { $("problem").textContent = p.error; return; }
  if (!picture) firstPicture(p);
  picture = p; $("problem").textContent = "";
  $("group").textContent = p.group;
  const pill = $("linkpill");
  pill.textContent = p.link_live ? "OPEN at every linked table" : "CLOSED: " + (p.link_state === "running"
    ? "no word from the progressive controller" : p.link_state === "inoperable" ? "the progressive controller stopped itself"
    : `the link is ${p.link_state}`);
  pill.className = "pill " + (p.link_live ? "live" : "down");
  alerts(p); levels(p); tables(p); technician(p);
  if (!historyRange) hitRows(p.hits, false);
  document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + 1);
}

// ---------------------------------------------------------------------------- history and log
function rangeOf(from, to) { return `from=${encodeURIComponent($(from).value)}&to=${encodeURIComponent($(to).value)}`; }
async function loadHits(ev) {
  if (ev) ev.preventDefault();
  const q = rangeOf("hitfrom", "hitto"); $("hitscsv").href = "/export/hits.csv?" + q;
  historyRange = ($("hitfrom").value === gamingDay && $("hitto").value === gamingDay) ? null : q;
  if (!historyRange) { if (picture) hitRows(picture.hits, false); return; }
  const r = await fetch("/api/hits?" + q, {credentials: "same-origin"});
  if (!r.ok) { $("problem").textContent = await r.text(); return; }
  hitRows((await r.json()).hits, true);
}
async function loadEvents(ev) {
  if (ev) ev.preventDefault();
  const q = rangeOf("evfrom", "evto"); $("eventscsv").href = "/export/events.csv?" + q;
  const r = await fetch("/api/events?" + q, {credentials: "same-origin"});
  if (!r.ok) return;
  const tb = $("events"); tb.replaceChildren();
  for (const e of (await r.json()).events) {
    const tr = el("tr", "eventrow", null, tb); cell(tr, when(e.at));
    el("span", "kind " + e.kind, e.kind, cell(tr, "")); cell(tr, e.table || ""); cell(tr, e.text, "wrap");
  }
}
let gamingDay = null;  // the dates' default: the gaming day of the server's picture
function firstPicture(p) {
  gamingDay = isoDay(new Date(p.day_start * 1000));
  for (const id of ["hitfrom", "hitto", "evfrom", "evto"]) $(id).value = gamingDay;
  loadEvents(); setInterval(loadEvents, 10000);
}
$("hitrange").addEventListener("submit", loadHits); $("evrange").addEventListener("submit", loadEvents);
const tick = () => { $("clock").textContent = new Date().toLocaleString("en-US", {...DT, weekday: "short"}); };
tick(); setInterval(tick, 1000);

const es = new EventSource("/events");
es.onmessage = (e) => render(JSON.parse(e.data));
es.addEventListener("expired", () => { es.close(); location.reload(); });
es.onerror = () => { $("problem").textContent = "connection to the LAP lost; retrying"; };
