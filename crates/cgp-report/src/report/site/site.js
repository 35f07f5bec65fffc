// cgp-gate history site: draws the charts from the JSON in #cgp-data. Hand-written (no library,
// no network): names are set with textContent only, charts are SVG made as they scroll into view.
(function () {
  "use strict";
  var t0 = performance.now();
  var D = JSON.parse(document.getElementById("cgp-data").textContent);
  var NS = "http://www.w3.org/2000/svg";
  var byId = function (id) { return document.getElementById(id); };

  function el(tag, attrs, text) {
    var e = tag.indexOf("svg:") === 0 ? document.createElementNS(NS, tag.slice(4)) : document.createElement(tag);
    for (var k in attrs) { if (attrs[k] !== undefined && attrs[k] !== null) e.setAttribute(k, attrs[k]); }
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // ---- numbers: the unit's best scale and three significant digits ----
  var TIME = { ns: 1e-9, us: 1e-6, "µs": 1e-6, usecond: 1e-6, ms: 1e-3, msecond: 1e-3, s: 1, second: 1, nsecond: 1e-9 };
  function scaleFor(unit, v) {
    var m = /^([a-zµ]+)(\/.*)?$/i.exec(unit || "");
    var a = Math.abs(v) || 1;
    if (m && TIME[m[1]] !== undefined) {
      var secs = a * TIME[m[1]], rest = m[2] || "";
      var steps = [["s", 1], ["ms", 1e-3], ["us", 1e-6], ["ns", 1e-9]];
      for (var i = 0; i < steps.length; i++) {
        if (secs >= steps[i][1] * 0.9995 || i === steps.length - 1) return { f: TIME[m[1]] / steps[i][1], u: steps[i][0] + rest };
      }
    }
    var pre = [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];
    for (var j = 0; j < pre.length; j++) { if (a >= pre[j][0] * 0.9995) return { f: 1 / pre[j][0], u: pre[j][1] + (unit || "") }; }
    return { f: 1, u: unit || "" };
  }
  function three(v) {
    if (!isFinite(v)) return "n/a";
    if (v === 0) return "0";
    var s = Number(v.toPrecision(3));
    return Math.abs(s) >= 1e5 || Math.abs(s) < 1e-3 ? s.toExponential(2) : String(s);
  }
  // A tick: three significant digits, or as many more as ticks `step` apart need to differ.
  function tick(v, step) {
    if (v === 0 || !isFinite(v)) return three(v);
    var p = Math.max(3, Math.floor(Math.log10(Math.abs(v))) - Math.floor(Math.log10(step)) + 1);
    return String(Number(v.toPrecision(Math.min(p, 12))));
  }
  function fmt(v, unit, sc) { sc = sc || scaleFor(unit, v); return three(v * sc.f) + (sc.u ? " " + sc.u : ""); }
  function niceTicks(lo, hi, n) {
    if (!(hi > lo)) { var d0 = Math.abs(lo) * 0.05 || 1; lo -= d0; hi += d0; }
    var step = Math.pow(10, Math.floor(Math.log10((hi - lo) / n)));
    var err = (hi - lo) / n / step;
    step *= err >= 7.5 ? 10 : err >= 3.5 ? 5 : err >= 1.5 ? 2 : 1;
    var out = [];
    for (var v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(v);
    return { lo: Math.min(lo, out[0]), hi: Math.max(hi, out[out.length - 1]), ticks: out, step: step };
  }

  // ---- names, links ----
  function name(s) { return s.target + "[" + s.size + "] " + s.kernel + " " + s.metric; }
  function shortSha(i) { var c = D.commits[i]; return c && c.sha ? c.sha.slice(0, 7) : "#" + i; }
  function commitUrl(i) {
    var c = D.commits[i];
    if (!D.commit_url || !c || !/^[0-9a-f]{7,64}$/i.test(c.sha) || !/^https?:\/\/[^\s"<>]+$/.test(D.commit_url)) return null;
    return D.commit_url + c.sha;
  }
  function commitCell(i) {
    var u = commitUrl(i);
    var e = u ? el("a", { href: u }, shortSha(i)) : el("code", {}, shortSha(i));
    if (D.commits[i]) e.title = D.commits[i].date;
    return e;
  }

  // ---- one chart ----
  var W = 900, H = 230, R = 12, T = 14, B = 40;
  function chart(s) {
    var lo = Infinity, hi = -Infinity, i, k;
    for (i = 0; i < s.y.length; i++) {
      lo = Math.min(lo, s.y[i], s.lo[i] === null ? Infinity : s.lo[i]);
      hi = Math.max(hi, s.y[i], s.hi[i] === null ? -Infinity : s.hi[i]);
      if (s.thr[i] !== null) { lo = Math.min(lo, s.thr[i]); hi = Math.max(hi, s.thr[i]); }
    }
    var yt = niceTicks(lo, hi, 5), sc = scaleFor(s.unit, Math.max(Math.abs(yt.lo), Math.abs(yt.hi)));
    var labels = yt.ticks.map(function (v) { return tick(v * sc.f, yt.step * sc.f) + " " + sc.u; });
    // The left margin fits the longest tick label (about 6.5 px a character at 11 px).
    var L = Math.min(W / 3, 12 + 6.5 * Math.max.apply(null, labels.map(function (t) { return t.length; })));
    var x0 = s.x[0], x1 = s.x[s.x.length - 1];
    var X = function (x) { return L + (x1 > x0 ? (x - x0) / (x1 - x0) : 0.5) * (W - L - R); };
    var Y = function (y) { return T + (1 - (y - yt.lo) / (yt.hi - yt.lo)) * (H - T - B); };
    var svg = el("svg:svg", { viewBox: "0 0 " + W + " " + H, width: W, height: H, role: "img", "class": "plot" });
    svg.appendChild(el("svg:title", {}, name(s) + " (" + s.gpu + ")"));
    var grid = "";
    yt.ticks.forEach(function (v, i) {
      grid += "M" + L + " " + Y(v).toFixed(1) + "H" + (W - R);
      svg.appendChild(el("svg:text", { x: L - 4, y: Y(v) + 4, "text-anchor": "end" }, labels[i]));
    });
    svg.appendChild(el("svg:path", { d: grid, stroke: "#eaeef2" }));
    var nx = Math.min(8, s.x.length), last = -1;
    for (k = 0; k < nx; k++) {
      var j = nx === 1 ? 0 : Math.round(k * (s.x.length - 1) / (nx - 1));
      if (j === last) continue;
      last = j;
      var anchor = j === 0 && s.x.length > 1 ? "start" : j === s.x.length - 1 && s.x.length > 1 ? "end" : "middle";
      svg.appendChild(el("svg:text", { x: X(s.x[j]), y: H - B + 16, "text-anchor": anchor }, shortSha(s.x[j])));
    }
    svg.appendChild(el("svg:text", { x: (L + W) / 2, y: H - 6, "text-anchor": "middle" }, "commit (oldest left); hover a point for its date and numbers"));
    var bars = "", line = "", thr = "", prevThr = null;
    for (i = 0; i < s.x.length; i++) {
      var px = X(s.x[i]).toFixed(1);
      if (s.lo[i] !== null) bars += "M" + px + " " + Y(s.lo[i]).toFixed(1) + "V" + Y(s.hi[i]).toFixed(1);
      line += (i ? "L" : "M") + px + " " + Y(s.y[i]).toFixed(1);
      if (s.thr[i] !== null) {
        thr += (prevThr === null ? "M" : "L") + px + " " + Y(s.thr[i]).toFixed(1);
      }
      prevThr = s.thr[i];
    }
    if (bars) svg.appendChild(el("svg:path", { d: bars, "class": "band" }));
    svg.appendChild(el("svg:path", { d: line, "class": "line" }));
    if (thr) svg.appendChild(el("svg:path", { d: thr, "class": "thr" }, undefined)).appendChild(el("svg:title", {}, "threshold, relative to the baseline each run was judged against"));
    s.cps.forEach(function (c) {
      var cx = X(c.at);
      svg.appendChild(el("svg:line", { x1: cx, x2: cx, y1: T, y2: H - B, "class": "cp" }));
      var left = cx > (L + W) / 2;
      var label = el("svg:text", { x: left ? cx - 4 : cx + 4, y: T + 10, "text-anchor": left ? "end" : "start", "class": "cp-label" }, "shift " + c.text + " from " + shortSha(c.at));
      svg.appendChild(label);
    });
    var many = s.x.length > 400;
    for (i = 0; i < s.x.length; i++) {
      var tip = shortSha(s.x[i]) + " " + (D.commits[s.x[i]] ? D.commits[s.x[i]].date : "") + "\n" + fmt(s.y[i], s.unit) +
        (s.lo[i] !== null ? " [" + fmt(s.lo[i], s.unit) + ", " + fmt(s.hi[i], s.unit) + "]" : "") +
        (s.t[i] ? "\nchange vs baseline " + s.t[i] : "") + (s.thr[i] !== null ? "\nthreshold " + fmt(s.thr[i], s.unit) : "");
      var dot = el("svg:circle", { cx: X(s.x[i]).toFixed(1), cy: Y(s.y[i]).toFixed(1), r: many ? 1.6 : 3, "class": "pt " + s.g[i] });
      dot.appendChild(el("svg:title", {}, tip));
      var u = commitUrl(s.x[i]);
      if (u) { var a = el("svg:a", { href: u }); a.appendChild(dot); svg.appendChild(a); } else svg.appendChild(dot);
    }
    return svg;
  }

  function sparkline(s) {
    var w = 120, h = 24, lo = Math.min.apply(null, s.y), hi = Math.max.apply(null, s.y), d = "";
    var n = s.y.length;
    for (var i = 0; i < n; i++) {
      d += (i ? "L" : "M") + (n > 1 ? i * (w - 2) / (n - 1) + 1 : w / 2).toFixed(1) + " " + (hi > lo ? h - 2 - (s.y[i] - lo) / (hi - lo) * (h - 4) : h / 2).toFixed(1);
    }
    var svg = el("svg:svg", { width: w, height: h, viewBox: "0 0 " + w + " " + h, "class": "sparkline" });
    svg.appendChild(el("svg:path", { d: d, "class": "spark" }));
    s.cps.forEach(function (c) {
      var idx = s.x.indexOf(c.at), cx = n > 1 ? idx * (w - 2) / (n - 1) + 1 : w / 2;
      svg.appendChild(el("svg:line", { x1: cx, x2: cx, y1: 0, y2: h, "class": "cp" }));
    });
    return svg;
  }

  // ---- the page ----
  byId("title").textContent = D.title;
  document.title = D.title;
  var gpus = {}, targets = {}, metrics = {};
  D.series.forEach(function (s) { gpus[s.gpu] = 1; targets[s.target] = 1; metrics[s.metric] = 1; });
  [["f-gpu", gpus], ["f-target", targets], ["f-metric", metrics]].forEach(function (p) {
    Object.keys(p[1]).sort().forEach(function (v) { byId(p[0]).appendChild(el("option", { value: v }, v || "(unnamed GPU)")); });
  });
  var changed = D.series.filter(function (s) { return s.cps.length; });
  byId("summary").textContent = D.commits.length + " results, " + D.series.length + " series on " + Object.keys(gpus).length +
    " GPU kind(s), " + changed.length + " with a level shift (each test at level " + three(D.level) + "). Made by cgp-gate " + D.tool_version + ".";
  if (D.synthetic) byId("summary").parentNode.appendChild(el("p", { "class": "banner" }, "Synthetic data: some results are not measurements."));
  // Series too short to find a shift: said in the header, and by each series (issue 59).
  if (D.too_short_note) byId("summary").parentNode.appendChild(el("p", { "class": "banner", id: "too-short" }, D.too_short_note));

  var rows = [];
  var tbody = byId("changed").tBodies[0];
  changed.forEach(function (s) {
    s.cps.forEach(function (c) {
      var tr = el("tr");
      var a = el("a", { href: "#" + s.id }, name(s));
      tr.appendChild(el("td")).appendChild(a);
      tr.appendChild(el("td", {}, s.gpu));
      tr.appendChild(el("td", { "class": c.worse ? "worse" : "better" }, c.text + (c.worse ? " worse" : "")));
      tr.appendChild(el("td")).appendChild(commitCell(c.at));
      tr.appendChild(el("td")).appendChild(sparkline(s));
      tbody.appendChild(tr);
      rows.push({ s: s, tr: tr });
    });
  });
  byId("changed").hidden = !changed.length;
  byId("none-changed").hidden = !!changed.length;
  if (!changed.length && D.too_short) {
    byId("none-changed").textContent = D.too_short >= D.series.length
      ? "No level shift can be found yet: the history is too short (above)."
      : "No level shift found in the " + (D.series.length - D.too_short) + " series long enough to search; " + D.too_short + " are too short (above).";
  }

  // Per GPU: baselines are per GPU, so each GPU kind gets its own heading and charts.
  var sections = [], holder = byId("gpus"), groups = {};
  Object.keys(gpus).sort().forEach(function (g) {
    var div = el("section", { "class": "gpu" });
    div.appendChild(el("h2", {}, "GPU: " + (g || "(unnamed)")));
    holder.appendChild(div);
    groups[g] = div;
  });
  var observer = "IntersectionObserver" in window ? new IntersectionObserver(function (entries) {
    entries.forEach(function (e) { if (e.isIntersecting) draw(e.target.cgp); });
  }, { rootMargin: "400px" }) : null;
  function draw(item) {
    if (item.drawn) return;
    item.drawn = true;
    item.box.appendChild(chart(item.s));
    if (observer) observer.unobserve(item.sec);
  }
  D.series.forEach(function (s) {
    var sec = el("section", { "class": "series", id: s.id, "data-gpu": s.gpu });
    sec.appendChild(el("h3", {}, name(s)));
    var meta = (s.gpu || "(unnamed GPU)") + " · " + s.x.length + " results · " + (s.dir === "higher" ? "higher" : s.dir === "lower" ? "lower" : "no direction") + " is better";
    if (s.cps.length) meta += " · " + s.cps.map(function (c) { return "shift " + c.text + " from " + shortSha(c.at); }).join("; ");
    if (s.short) meta += " · " + s.short;
    sec.appendChild(el("div", { "class": "meta" }, meta));
    var box = el("div", { "class": "chart" });
    sec.appendChild(box);
    groups[s.gpu].appendChild(sec);
    var item = { s: s, sec: sec, box: box, drawn: false, text: (name(s) + " " + s.gpu).toLowerCase() };
    sec.cgp = item;
    sections.push(item);
    if (observer) observer.observe(sec); else draw(item);
  });

  function apply() {
    var g = byId("f-gpu").value, t = byId("f-target").value, m = byId("f-metric").value;
    var q = byId("f-search").value.trim().toLowerCase(), only = byId("f-changed").checked, shown = 0;
    var keep = function (s, text) {
      return (!g || s.gpu === g) && (!t || s.target === t) && (!m || s.metric === m) && (!q || text.indexOf(q) >= 0) && (!only || s.cps.length > 0);
    };
    sections.forEach(function (it) { var k = keep(it.s, it.text); if (it.sec.hidden === k) it.sec.hidden = !k; if (k) shown++; });
    rows.forEach(function (r) { r.tr.hidden = !keep(r.s, (name(r.s) + " " + r.s.gpu).toLowerCase()); });
    Object.keys(groups).forEach(function (k) { groups[k].hidden = !!g && k !== g; });
    byId("shown").textContent = shown + " of " + sections.length + " series shown";
    return shown;
  }
  ["f-gpu", "f-target", "f-metric", "f-changed"].forEach(function (id) { byId(id).addEventListener("change", apply); });
  byId("f-search").addEventListener("input", apply);
  apply();

  // `#all` draws every chart now (printing, tests); `#bench` also times the filters.
  var hash = location.hash.slice(1);
  if (hash === "all") sections.forEach(draw);
  else if (hash) { var target = byId(hash); if (target && target.cgp) draw(target.cgp); }
  void document.body.offsetHeight;
  document.body.setAttribute("data-load-ms", (performance.now() - t0).toFixed(1));
  document.body.setAttribute("data-ready-ms", performance.now().toFixed(1));
  document.body.setAttribute("data-charts", String(holder.querySelectorAll("svg.plot").length));
  if (hash === "bench") {
    // Each step includes the style and layout it causes (offsetHeight forces them).
    var t1 = performance.now(), search = byId("f-search"), gsel = byId("f-gpu");
    search.value = D.series.length ? D.series[D.series.length - 1].kernel.toLowerCase() : "";
    apply(); void document.body.offsetHeight;
    search.value = "";
    gsel.selectedIndex = gsel.options.length > 1 ? 1 : 0;
    apply(); void document.body.offsetHeight;
    gsel.selectedIndex = 0;
    var n = apply(); void document.body.offsetHeight;
    document.body.setAttribute("data-filter-ms", ((performance.now() - t1) / 3).toFixed(1));
    document.body.setAttribute("data-shown", String(n));
    var t2 = performance.now();
    sections.forEach(draw); void document.body.offsetHeight;
    document.body.setAttribute("data-draw-all-ms", (performance.now() - t2).toFixed(1));
  }
})();
