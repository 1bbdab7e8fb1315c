// perfbot dashboard: the trend page's interactive chart, drawn with the
// vendored uPlot from the JSON the page embeds (script#trend-json):
// each commit's median as a point on a line, its interval as a vertical
// bar with caps, each change point as a dashed red line with its size; a
// tooltip on hover (commit, subject, date, median, interval, runs,
// change) and a click that opens the commit's page (a change point's:
// its segments compared and how to bisect it).
(function () {
  "use strict";
  var holder = document.getElementById("trend-chart");
  var source = document.getElementById("trend-json");
  if (!holder || !source || typeof uPlot === "undefined") return;
  var data = JSON.parse(source.textContent);
  var pts = data.points;
  if (!pts.length) return;

  var xs = pts.map(function (_, i) { return i; });
  var med = pts.map(function (p) { return p.median; });
  var font = '13px system-ui, "Liberation Sans", sans-serif';

  // fmt shows a value with 4 significant digits, as the table does.
  function fmt(v) { return v == null ? "" : Number(v.toPrecision(4)).toString(); }

  function drawIntervals(u) {
    var ctx = u.ctx;
    ctx.save();
    ctx.strokeStyle = "rgba(29, 78, 216, 0.75)";
    ctx.lineWidth = 2 * devicePixelRatio;
    var cap = 4 * devicePixelRatio;
    pts.forEach(function (p, i) {
      if (p.lo == null || p.hi == null) return;
      var x = u.valToPos(i, "x", true);
      var y0 = u.valToPos(p.lo, "y", true), y1 = u.valToPos(p.hi, "y", true);
      ctx.beginPath();
      ctx.moveTo(x, y0); ctx.lineTo(x, y1);
      ctx.moveTo(x - cap, y0); ctx.lineTo(x + cap, y0);
      ctx.moveTo(x - cap, y1); ctx.lineTo(x + cap, y1);
      ctx.stroke();
    });
    ctx.restore();
  }

  function drawChanges(u) {
    var ctx = u.ctx;
    ctx.save();
    ctx.strokeStyle = "#b91c1c";
    ctx.fillStyle = "#b91c1c";
    ctx.lineWidth = 2 * devicePixelRatio;
    ctx.setLineDash([6 * devicePixelRatio, 4 * devicePixelRatio]);
    ctx.font = "bold " + 13 * devicePixelRatio + 'px system-ui, "Liberation Sans", sans-serif';
    pts.forEach(function (p, i) {
      if (!p.change) return;
      var x = u.valToPos(i, "x", true);
      ctx.beginPath();
      ctx.moveTo(x, u.bbox.top); ctx.lineTo(x, u.bbox.top + u.bbox.height);
      ctx.stroke();
      var label = p.change.split(" ")[0];
      var w = ctx.measureText(label).width;
      var lx = x + 4 * devicePixelRatio;
      if (lx + w > u.bbox.left + u.bbox.width) lx = x - 4 * devicePixelRatio - w;
      ctx.fillText(label, lx, u.bbox.top + 14 * devicePixelRatio);
    });
    ctx.restore();
  }

  var tip = document.createElement("div");
  tip.className = "tooltip";
  tip.id = "trend-tooltip";
  tip.style.display = "none";

  function showTip(u) {
    var i = u.cursor.idx;
    if (i == null || u.cursor.left < 0) { tip.style.display = "none"; return; }
    var p = pts[i];
    var lines = [
      "<b>" + esc(p.short) + "</b>" + (p.subject ? " " + esc(p.subject) : ""),
      '<span class="sub">first run ' + esc(p.date) + "</span>",
      "median " + fmt(p.median) + " " + esc(data.unit) +
        (p.lo != null ? " [" + fmt(p.lo) + ", " + fmt(p.hi) + "]" : " (too few runs for an interval)"),
      p.runs + (p.runs === 1 ? " run" : " runs"),
    ];
    if (p.change) lines.push('<b class="verdict-' + esc(p.change.split(" ")[1]) + '">change point: ' + esc(p.change) + "</b>");
    lines.push('<span class="sub">click: ' + (p.change ? "the change, compared and bisected" : "the commit") + "</span>");
    tip.innerHTML = lines.join("<br>");
    tip.style.display = "block";
    var left = u.valToPos(i, "x") + 12, top = u.valToPos(p.median, "y") + 12;
    var ow = u.over.clientWidth;
    if (left + tip.offsetWidth > ow) left = Math.max(0, left - tip.offsetWidth - 24);
    tip.style.left = left + "px";
    tip.style.top = top + "px";
  }

  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }

  var opts = {
    width: Math.min(holder.clientWidth || 1200, 1250),
    height: 420,
    legend: { show: false },
    cursor: { points: { size: 10 }, drag: { x: false, y: false } },
    scales: { x: { time: false } },
    axes: [
      {
        font: font, labelFont: font, label: "commit (oldest first)",
        values: function (u, splits) { return splits.map(function (i) { return pts[i] ? pts[i].short : ""; }); },
        incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000], space: 70,
      },
      { font: font, labelFont: font, label: data.unit, size: 70, values: function (u, splits) { return splits.map(fmt); } },
    ],
    series: [
      {},
      { label: "median", stroke: "#1d4ed8", width: 2, points: { show: true, size: 6, fill: "#1d4ed8" } },
    ],
    hooks: { draw: [drawIntervals, drawChanges], setCursor: [showTip] },
  };
  // The y range holds every interval, not only the medians.
  var lo = Math.min.apply(null, pts.map(function (p) { return p.lo != null ? p.lo : p.median; }));
  var hi = Math.max.apply(null, pts.map(function (p) { return p.hi != null ? p.hi : p.median; }));
  var pad = (hi - lo) * 0.08 || Math.abs(hi) * 0.05 || 1;
  opts.scales.y = { range: [lo - pad, hi + pad] };

  var u = new uPlot(opts, [xs, med], holder);
  u.over.appendChild(tip);
  u.over.addEventListener("mouseleave", function () { tip.style.display = "none"; });
  u.over.addEventListener("click", function () {
    var i = u.cursor.idx;
    if (i != null && pts[i]) window.location.href = pts[i].url;
  });
  window.perfbotChart = u; // for the browser tests and the console
  holder.dataset.ready = "true";
})();
