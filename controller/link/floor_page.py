"""The floor view's two pages (controller/link/floor.py): plain HTML, CSS and a little JavaScript
(no framework, no build step).  The page opens ``/events`` (Server-Sent Events) and redraws
from each picture pushed; every value is put in with ``textContent`` (never as markup)."""

_STYLE = """
body{font-family:system-ui,sans-serif;margin:0;background:#10141a;color:#e8e8e8}
header{background:#1d2630;padding:.5em 1em;display:flex;justify-content:space-between;align-items:center}
h1{font-size:1.2em;margin:0}h2{font-size:1em;margin:.8em 0 .3em}
main{padding:0 1em 1em}table{border-collapse:collapse;width:100%;font-size:.9em}
td,th{border-bottom:1px solid #2c3845;padding:.25em .5em;text-align:left}
.levels{display:flex;flex-wrap:wrap;gap:1em}.level{background:#1d2630;padding:.6em 1em;border-radius:6px}
.meter{font-size:2em;font-variant-numeric:tabular-nums;color:#ffd34d}
.open{color:#5fd35f}.closed{color:#ff6a6a}.tilt{background:#5a1a1a}.pending{color:#ffd34d}
.old{color:#ff6a6a}.err{color:#ff6a6a}form.login{max-width:20em;margin:4em auto;background:#1d2630;padding:1.5em}
form.login input{display:block;width:100%;margin:.3em 0 .8em;font-size:1.1em}
"""

LOGIN_PAGE = (
    """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Floor view: log in</title>
<style>"""
    + _STYLE
    + """</style></head><body>
<form class="login" method="post" action="/login"><h1>Floor view</h1>@MSG
<label>Name <input name="person" id="person" autocomplete="username" required></label>
<label>PIN <input name="pin" id="pin" type="password" inputmode="numeric" autocomplete="current-password" required>
</label><button id="go" type="submit">Log in</button></form></body></html>"""
)

PAGE = (
    """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Floor view</title>
<style>"""
    + _STYLE
    + """</style></head><body>
<header><h1>Floor view &mdash; link <span id="group"></span>: <span id="linkstate"></span>
<small id="lapage"></small></h1><form method="post" action="/logout">@WHO <button>Log out</button></form></header>
<main><p class="err" id="problem"></p>
<h2>Linked meters</h2><div class="levels" id="levels"></div>
<h2>Tables</h2><table><thead><tr><th>Table</th><th>Asset</th><th>Game</th><th>State</th><th>Round</th>
<th>Progressive</th><th>Tilt</th><th>Last heard</th></tr></thead><tbody id="tables"></tbody></table>
<h2>Hits (pending and this gaming day)</h2><table><thead><tr><th>Level</th><th>#</th><th>Table</th><th>Round</th>
<th>Seat</th><th>Hand</th><th>Amount</th><th>Decided</th><th>Validated by</th><th>Paid</th></tr></thead>
<tbody id="hits"></tbody></table></main>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
const money = (c) => "$" + (Math.floor(c / 100)).toLocaleString("en-US") + "." + String(c % 100).padStart(2, "0");
const hhmm = (t) => t ? new Date(t * 1000).toLocaleTimeString() : "";
function cell(tr, text, cls) { const td = document.createElement("td"); td.textContent = text;
  if (cls) td.className = cls; tr.appendChild(td); return td; }
const NS = "http://www.w3.org/2000/svg";
function svg(tag, attrs, parent) { const e = document.createElementNS(NS, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]); if (parent) parent.appendChild(e); return e; }
function chart(lv, day, now) {
  const W = 320, H = 90, s = svg("svg", {width: W, height: H, viewBox: `0 0 ${W} ${H}`, class: "chart"});
  const pts = lv.chart; if (!pts.length) return s;
  const vals = pts.map(p => p[1]); const lo = Math.min(...vals), hi = Math.max(...vals, lo + 1);
  const x = (t) => 4 + (W - 8) * (t - day) / Math.max(now - day, 1);
  const y = (v) => H - 6 - (H - 12) * (v - lo) / (hi - lo);
  // a step chart: the meter holds its value until the next change
  let d = ""; pts.forEach((p, i) => { d += i ? ` H${x(p[0]).toFixed(1)} V${y(p[1]).toFixed(1)}`
    : `M${x(p[0]).toFixed(1)} ${y(p[1]).toFixed(1)}`; });
  svg("rect", {x: 0, y: 0, width: W, height: H, fill: "#10141a"}, s);
  svg("path", {d: d, fill: "none", stroke: "#ffd34d", "stroke-width": 1.5}, s);
  for (const h of lv.hit_marks) { const c = svg("circle", {cx: x(h[0]).toFixed(1), cy: 8, r: 4, fill: "#ff6a6a",
    class: "hitmark"}, s); svg("title", {}, c).textContent = "hit " + money(h[1]) + " at " + hhmm(h[0]); }
  return s;
}
function render(p) {
  if (p.error) { $("problem").textContent = p.error; return; }
  $("problem").textContent = "";
  $("group").textContent = p.group; $("linkstate").textContent = p.link_state;
  $("linkstate").className = p.link_state === "running" ? "open" : "closed";
  $("lapage").textContent = p.lap_heartbeat_s === null ? " (no LAP heartbeat)"
    : ` (LAP heartbeat ${p.lap_heartbeat_s} s ago)`;
  const lv = $("levels"); lv.replaceChildren();
  for (const l of p.levels) { const d = document.createElement("div"); d.className = "level"; d.dataset.level = l.level;
    const n = document.createElement("div"); n.textContent = l.level + " (" + l.hits + " hits)"; d.appendChild(n);
    const m = document.createElement("div"); m.className = "meter"; m.dataset.cents = l.cents;
    m.textContent = money(l.cents);
    d.appendChild(m); d.appendChild(chart(l, p.day_start, p.now)); lv.appendChild(d); }
  const tb = $("tables"); tb.replaceChildren();
  for (const t of p.tables) { const tr = document.createElement("tr"); tr.className = "tablerow";
    tr.dataset.table = t.id;
    const tilts = Object.entries(t.tilts).map(([k, v]) => k + ": " + v).join("; ");
    if (tilts || t.state === "tilt") tr.classList.add("tilt");
    cell(tr, t.id); cell(tr, t.asset); cell(tr, t.game); cell(tr, t.state); cell(tr, t.round ?? "");
    cell(tr, (t.open ? "open" : "closed") + (t.open ? "" : " (" + t.reason + ")"), t.open ? "open" : "closed");
    cell(tr, tilts + (t.mismatch ? " mismatch: " + t.mismatch : ""));
    cell(tr, t.heard_s === null ? "never" : t.heard_s + " s ago", t.heard_s === null || t.heard_s > 10 ? "old" : "");
    tb.appendChild(tr); }
  const hb = $("hits"); hb.replaceChildren();
  for (const h of p.hits) { const tr = document.createElement("tr");
    tr.className = "hitrow" + (h.pending ? " pending" : "");
    cell(tr, h.level); cell(tr, h.order); cell(tr, h.table); cell(tr, h.round); cell(tr, h.seat); cell(tr, h.hand);
    cell(tr, money(h.cents)); cell(tr, hhmm(h.decided_at)); cell(tr, h.pending ? "pending" : (h.validated_by || ""));
    cell(tr, h.pending ? "" : hhmm(h.paid_at)); hb.appendChild(tr); }
  document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + 1);
}
const es = new EventSource("/events");
es.onmessage = (e) => render(JSON.parse(e.data));
es.addEventListener("expired", () => { es.close(); location.reload(); });
es.onerror = () => { $("problem").textContent = "connection to the LAP lost; retrying"; };
</script></body></html>"""
)
