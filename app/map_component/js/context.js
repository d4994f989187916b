// @ts-check
// The context image.
// The papers outside the filters or search, drawn faintly: an image of every paper in grey for the
// current view, redrawn when the view moves (an image costs Plotly nothing to place). Its pixels are
// written here, not drawn on a canvas: reading a canvas back and encoding it cost more than drawing.

import { plotArea, ranges } from "./plot.js";
import { capOf, sampleRows } from "./sampling.js";
import { SHARED } from "./shared.js";
/** @import { AtlasMap } from "./atlas_map.js" */

/** @param {AtlasMap} inst */
export async function drawContext(inst) {
  const area = plotArea(inst.gd), now = ranges(inst.gd);
  if (!area || !now) return null;
  const t = inst.table;
  const xr = now.x, yr = now.y;
  const width = Math.max(1, Math.round(area.w)), height = Math.max(1, Math.round(area.h));
  const level = Math.round((t.n < 5000 ? 0.8 : 0.6) * 255);
  const r = Math.max(1, (t.size * 0.85) / 2);
  const sx = width / (xr[1] - xr[0]), sy = height / (yr[1] - yr[0]);
  const cover = new Uint8ClampedArray(width * height); // each pixel's opacity: the dots' union, as one fill
  const sample = sampleRows(t, null, now, capOf(inst.view)); // a big map's faint rest: a sample of it
  for (let j = 0, count = sample ? sample.length : t.n; j < count; j++) {
    const i = sample ? sample[j] : j;
    disc(cover, width, height, (t.x[i] - xr[0]) * sx, (yr[1] - t.y[i]) * sy, r, level);
  }
  const image = new ImageData(width, height);
  const rgba = new Uint8ClampedArray(4); // one pixel's bytes, written as one 32-bit word of the image
  rgba.set([1, 3, 5].map((k) => parseInt(SHARED.context_colour.slice(k, k + 2), 16)));
  const pixels = new Uint32Array(image.data.buffer), colour = new Uint32Array(rgba.buffer);
  for (let k = 0; k < cover.length; k++) {
    if (cover[k] === 0) continue;
    rgba[3] = cover[k];
    pixels[k] = colour[0];
  }
  const blob = pngOf(image);
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

// A dot of radius `r` px at (x, y) in the opacity plane `cover`, its edge smoothed over a pixel,
// where it is more opaque than what is there: the dots' union, one flat grey (fallback.js `dot` blends
// coloured dots over each other instead, so that density shows). Written pixel by pixel: the canvas's
// own paths, read back, took 0.1-0.2 s for the 100,000 dots of a big map's view. The distance is a
// square root, never `Math.hypot`: the same pixels, four to five times faster in V8 (200,000 dots:
// 0.30 s against 0.065 s).
/** @param {Uint8ClampedArray} cover @param {number} width @param {number} height @param {number} x @param {number} y @param {number} r @param {number} level */
function disc(cover, width, height, x, y, r, level) {
  const x0 = Math.max(0, Math.floor(x - r - 0.5)), x1 = Math.min(width, Math.ceil(x + r + 0.5));
  const y0 = Math.max(0, Math.floor(y - r - 0.5)), y1 = Math.min(height, Math.ceil(y + r + 0.5));
  for (let py = y0; py < y1; py++) {
    const dy = py + 0.5 - y;
    for (let px = x0; px < x1; px++) {
      const dx = px + 0.5 - x;
      const inside = r + 0.5 - Math.sqrt(dx * dx + dy * dy); // 1 or more: the pixel is covered
      if (inside <= 0) continue;
      const k = py * width + px, value = inside >= 1 ? level : level * inside;
      if (value > cover[k]) cover[k] = value;
    }
  }
}

/** @param {AtlasMap} inst */
export function scheduleContext(inst) {
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

// An image's pixels as a PNG, uncompressed (zlib's stored blocks): 40 ms for a view of 1,400 x 800
// px where the canvas's own encoder (`toBlob`) took 190 ms of the main thread, a tenth of a first
// search at a million papers. The image lives in this page only, so its size (4 bytes a pixel) costs
// no transfer.
/** @param {ImageData} image @returns {Blob} */
export function pngOf(image) {
  const { width, height, data } = image;
  const stride = width * 4 + 1, raw = height * stride, blocks = Math.ceil(raw / 65535);
  const idat = 2 + raw + 5 * blocks + 4;
  const out = new Uint8Array(8 + (12 + 13) + (12 + idat) + 12), view = new DataView(out.buffer);
  out.set([137, 80, 78, 71, 13, 10, 26, 10]);
  let at = 8;
  const chunk = (/** @type {string} */ type, /** @type {number} */ length, /** @type {(p: number) => void} */ fill) => {
    view.setUint32(at, length);
    for (let k = 0; k < 4; k++) out[at + 4 + k] = type.charCodeAt(k);
    fill(at + 8);
    view.setUint32(at + 8 + length, crc32(out, at + 4, at + 8 + length));
    at += 12 + length;
  };
  chunk("IHDR", 13, (p) => {
    view.setUint32(p, width);
    view.setUint32(p + 4, height);
    out.set([8, 6, 0, 0, 0], p + 8); // 8 bits a channel, RGBA, no interlace
  });
  chunk("IDAT", idat, (p) => {
    const scan = new Uint8Array(raw); // each row: filter 0 ("none"), then its pixels
    for (let y = 0; y < height; y++) scan.set(data.subarray(y * width * 4, (y + 1) * width * 4), y * stride + 1);
    out[p] = 0x78; // zlib header: deflate, 32 KB window
    out[p + 1] = 0x01;
    let q = p + 2;
    for (let s = 0; s < raw; s += 65535) {
      const n = Math.min(65535, raw - s);
      out[q] = s + n === raw ? 1 : 0; // the last block
      view.setUint16(q + 1, n, true);
      view.setUint16(q + 3, ~n & 0xffff, true);
      out.set(scan.subarray(s, s + n), q + 5);
      q += 5 + n;
    }
    let a = 1, b = 0; // Adler-32, reduced every 5,552 bytes (the most that cannot overflow)
    for (let s = 0; s < raw; s += 5552) {
      for (let k = s, end = Math.min(raw, s + 5552); k < end; k++) b += a += scan[k];
      a %= 65521;
      b %= 65521;
    }
    view.setUint32(q, ((b << 16) | a) >>> 0);
  });
  chunk("IEND", 0, () => {});
  return new Blob([out], { type: "image/png" });
}

const CRC_TABLE = Uint32Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

/** @param {Uint8Array} bytes @param {number} start @param {number} end */
function crc32(bytes, start, end) {
  let c = 0xffffffff;
  for (let i = start; i < end; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
