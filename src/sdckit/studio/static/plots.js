// Small inline SVG plots of the studio, drawn here (no plotting library, no external asset).
"use strict";

const SVG = "http://www.w3.org/2000/svg";

function svgEl(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

function extent(values) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values) {
    if (!Number.isFinite(v)) continue;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (lo === Infinity) return [0, 1];
  if (lo === hi) return [lo - 0.5 * (Math.abs(lo) || 1), hi + 0.5 * (Math.abs(hi) || 1)];
  return [lo, hi];
}

/** A number as a person writes it: at most 4 significant digits, no exponent for ordinary sizes. */
export function formatNumber(value) {
  if (value === null || value === undefined) return "–";
  if (typeof value !== "number") return String(value);
  if (!Number.isFinite(value)) return Number.isNaN(value) ? "–" : value > 0 ? "∞" : "−∞";
  if (Number.isInteger(value)) return value.toLocaleString("en-US");
  const magnitude = Math.abs(value);
  if (magnitude >= 1e-3 && magnitude < 1e6) return String(Number(value.toPrecision(4)));
  return value.toExponential(2);
}

/**
 * The value of one measure along the steps from the original to the current one.
 * @param {number[]} values one per step (null where the measure was not computed)
 * @param {string} label what the plot shows, for screen readers
 */
export function sparkline(values, label) {
  const width = 240;
  const height = 24;
  const pad = 4;
  const svg = svgEl("svg", {
    width, height, viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": label, class: "sparkline",
  });
  svg.append(svgEl("title", {}, label));
  const [lo, hi] = extent(values);
  const n = values.length;
  const x = (i) => (n === 1 ? width / 2 : pad + (i * (width - 2 * pad)) / (n - 1));
  const y = (v) => height - pad - ((v - lo) * (height - 2 * pad)) / (hi - lo);
  const points = values.map((v, i) => (Number.isFinite(v) ? [x(i), y(v)] : null)).filter(Boolean);
  if (points.length > 1) {
    svg.append(svgEl("polyline", { class: "line", points: points.map((p) => p.join(",")).join(" ") }));
  }
  values.forEach((v, i) => {
    if (!Number.isFinite(v)) return;
    svg.append(svgEl("circle", { class: i === n - 1 ? "dot current" : "dot", cx: x(i), cy: y(v), r: i === n - 1 ? 3.5 : 2.2 }));
  });
  return svg;
}

/**
 * The risk-utility map of a sweep: one focusable point per parameter value.
 * @param {{risk: number, utility: number, label: string}[]} points
 * @param {{risk: string, utility: string}} axes the names of the two measures
 * @param {(index: number) => void} onPick called when a point is clicked or chosen with Enter/Space
 */
export function riskUtilityMap(points, axes, onPick) {
  const width = 520;
  const height = 320;
  const left = 64;
  const right = 16;
  const top = 16;
  const bottom = 46;
  const svg = svgEl("svg", {
    width, height, viewBox: `0 0 ${width} ${height}`, role: "group", class: "ru-map",
    "aria-label": `Risk-utility map: ${axes.risk} against ${axes.utility}, one point per parameter value`,
  });
  // Each axis runs a little past the extreme points, so no point sits on an axis.
  const padded = ([lo, hi]) => [lo - 0.08 * (hi - lo), hi + 0.08 * (hi - lo)];
  const riskRange = extent(points.map((p) => p.risk));
  const utilityRange = extent(points.map((p) => p.utility));
  const [rlo, rhi] = padded(riskRange);
  const [ulo, uhi] = padded(utilityRange);
  const x = (u) => left + ((u - ulo) * (width - left - right)) / (uhi - ulo);
  const y = (r) => height - bottom - ((r - rlo) * (height - top - bottom)) / (rhi - rlo);
  svg.append(
    svgEl("line", { class: "axis", x1: left, y1: height - bottom, x2: width - right, y2: height - bottom }),
    svgEl("line", { class: "axis", x1: left, y1: top, x2: left, y2: height - bottom }),
    svgEl("text", { x: (left + width - right) / 2, y: height - 8, "text-anchor": "middle" }, `${axes.utility} (utility)`),
    svgEl("text", { x: 14, y: (top + height - bottom) / 2, "text-anchor": "middle", transform: `rotate(-90 14 ${(top + height - bottom) / 2})` }, `${axes.risk} (risk)`),
  );
  // Ticks at the smallest and largest values drawn.
  for (const value of utilityRange) {
    svg.append(svgEl("line", { class: "axis", x1: x(value), y1: height - bottom, x2: x(value), y2: height - bottom + 4 }));
    svg.append(svgEl("text", { x: x(value), y: height - bottom + 16, "text-anchor": "middle" }, formatNumber(value)));
  }
  for (const value of riskRange) {
    svg.append(svgEl("line", { class: "axis", x1: left - 4, y1: y(value), x2: left, y2: y(value) }));
    svg.append(svgEl("text", { x: left - 6, y: y(value) + 4, "text-anchor": "end" }, formatNumber(value)));
  }
  points.forEach((p, i) => {
    if (!Number.isFinite(p.risk) || !Number.isFinite(p.utility)) return;
    const name = `${p.label}: risk ${formatNumber(p.risk)}, utility ${formatNumber(p.utility)}; make this a step`;
    const dot = svgEl("circle", {
      class: "point", cx: x(p.utility), cy: y(p.risk), r: 7, tabindex: 0, role: "button",
      "aria-label": name, "data-index": i,
    });
    dot.append(svgEl("title", {}, name));
    dot.addEventListener("click", () => onPick(i));
    dot.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        onPick(i);
      }
    });
    svg.append(dot);
    const leftOfPoint = x(p.utility) > 0.7 * width;
    svg.append(svgEl("text", {
      x: x(p.utility) + (leftOfPoint ? -9 : 9), y: y(p.risk) - 6,
      "text-anchor": leftOfPoint ? "end" : "start", "aria-hidden": "true",
    }, p.label));
  });
  return svg;
}
