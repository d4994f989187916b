// @ts-check
// The context image.
// The papers outside the filters or search, drawn faintly: an image of every paper in grey for the
// current view, redrawn when the view moves (an image costs Plotly nothing to place).
/** @param {AtlasMap} inst */
async function drawContext(inst) {
  const area = plotArea(inst.gd), now = ranges(inst.gd);
  if (!area || !now) return null;
  const t = inst.table;
  const xr = now.x, yr = now.y;
  const width = Math.max(1, Math.round(area.w)), height = Math.max(1, Math.round(area.h));
  const canvas = document.createElement("canvas");
  canvas.width = width;
  canvas.height = height;
  const g = canvas.getContext("2d");
  g.fillStyle = SHARED.context_colour;
  g.globalAlpha = t.n < 5000 ? 0.8 : 0.6;
  const r = Math.max(1, (t.size * 0.85) / 2);
  const sx = width / (xr[1] - xr[0]), sy = height / (yr[1] - yr[0]);
  const square = r <= 1.6; // dots of a pixel or three: squares look the same and draw far faster
  g.beginPath();
  const sample = sampleRows(t, null, now, capOf(inst.view)); // a big map's faint rest: a sample of it
  for (let j = 0, count = sample ? sample.length : t.n; j < count; j++) {
    const i = sample ? sample[j] : j;
    const px = (t.x[i] - xr[0]) * sx, py = (yr[1] - t.y[i]) * sy;
    if (px < -r || py < -r || px > width + r || py > height + r) continue;
    if (square) {
      g.rect(px - r, py - r, 2 * r, 2 * r);
      continue;
    }
    g.moveTo(px + r, py);
    g.arc(px, py, r, 0, 2 * Math.PI);
  }
  g.fill();
  const blob = await new Promise((resolve) => canvas.toBlob(resolve, "image/png"));
  const previous = inst.contextUrl;
  inst.contextUrl = URL.createObjectURL(blob);
  inst.context = {
    source: inst.contextUrl,
    xref: "x", yref: "y", x: xr[0], y: yr[1], sizex: xr[1] - xr[0], sizey: yr[1] - yr[0],
    sizing: "stretch", layer: "below", opacity: 1,
  };
  const sub = inst.charts.sub;
  inst.contextShown = false;
  if (sub.plotted && inst.active === "sub") {
    inst.contextShown = true;
    sub.syncing = true;
    try {
      await window.Plotly.relayout(sub.div, { "images[0]": inst.context });
    } finally {
      sub.syncing = false;
    }
  }
  if (previous) URL.revokeObjectURL(previous); // the chart shows the new image now
}

/** @param {AtlasMap} inst */
function scheduleContext(inst) {
  clearTimeout(inst.contextTimer);
  if (inst.mask === null && inst.table.n > SHARED.draw_cap) {
    inst.contextStale = true; // nothing is dimmed now: drawn when a filter or search needs it
    return;
  }
  inst.contextTimer = setTimeout(() => {
    if (!inst.busy) drawContext(inst);
    else inst.contextStale = true;
  }, 150);
}

