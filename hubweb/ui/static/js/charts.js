// Small hand-written SVG charts for the reports view (contract §17): a line chart, stacked areas,
// grouped bars and a scatter with reference lines. No library, no inline style (the CSP forbids
// it): every colour is a class (series-0 …, ideal, reference) that reports.css styles for light
// and dark schemes. Every text, Jira's included, goes in as a text node.
// Loaded only by views/reports.js, which the router imports on demand: not part of the first load.

import {day} from './format.js';

const NS = 'http://www.w3.org/2000/svg';
const WIDTH = 1000;
const HEIGHT = 300;
const MARGIN = {top: 14, right: 84, bottom: 42, left: 56};
const PLOT_W = WIDTH - MARGIN.left - MARGIN.right;
const PLOT_H = HEIGHT - MARGIN.top - MARGIN.bottom;
const NUMBER = new Intl.NumberFormat('ru-RU', {maximumFractionDigits: 2});

export const number = (value) => (value === null || value === undefined ? '—' : NUMBER.format(value));

/** An SVG element: s('rect', {x: 1, class: 'bar'}, child...). Attributes go through setAttribute. */
export function s(tag, attrs = {}, ...children) {
  const node = document.createElementNS(NS, tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value !== null && value !== undefined && value !== false) node.setAttribute(name, String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/**
 * A y axis for values up to `value`: a step of 1, 2, 2.5 or 5 × 10^k giving at most four or five
 * gridlines, and the top = a whole number of steps. Counts of issues never get a fractional step.
 */
export function axis(value, whole = false) {
  if (!(value > 0)) return {top: 1, step: whole ? 1 : 0.25};
  const rough = value / 4;
  const power = 10 ** Math.floor(Math.log10(rough));
  let step = [1, 2, 2.5, 5, 10].map((factor) => factor * power).find((candidate) => candidate >= rough);
  if (whole) step = Math.max(1, Math.ceil(step));
  return {top: Math.ceil(value / step - 1e-9) * step, step};
}

const round = (value) => Math.round(value * 10) / 10;
const dayLabel = (text) => `${text.slice(8, 10)}.${text.slice(5, 7)}`;

/** The chart's <svg> with its accessible name, the y grid and axis, and the x labels. */
function frame(label, {top: yMax, step}, xLabels, xAt) {
  const y = (value) => round(MARGIN.top + PLOT_H - (value / yMax) * PLOT_H);
  const grid = s('g', {class: 'grid', 'aria-hidden': 'true'});
  for (let index = 0; index * step <= yMax + 1e-9; index += 1) {
    const value = index * step;
    grid.append(
      s('line', {x1: MARGIN.left, x2: WIDTH - MARGIN.right, y1: y(value), y2: y(value)}),
      s('text', {x: MARGIN.left - 6, y: y(value) + 4, class: 'tick y-tick'}, number(value)));
  }
  const every = Math.max(1, Math.ceil(xLabels.length / 10));
  const last = xLabels.length - 1;
  xLabels.forEach((text, index) => {
    // every `every`-th label, and the last one unless it would crowd the one before it
    const shown = index === last ? last % every === 0 || last % every >= every / 2 : index % every === 0;
    if (!shown || (index !== last && last - index <= every / 2)) return;
    grid.append(s('text', {x: xAt(index), y: HEIGHT - MARGIN.bottom + 18, class: 'tick x-tick'}, text));
  });
  grid.append(s('line', {class: 'axis', x1: MARGIN.left, x2: WIDTH - MARGIN.right,
    y1: MARGIN.top + PLOT_H, y2: MARGIN.top + PLOT_H}));
  const svg = s('svg', {viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: 'img', 'aria-label': label,
    class: 'chart-svg', preserveAspectRatio: 'xMidYMid meet'}, grid);
  return {svg, y};
}

/** x of the i-th of `count` evenly spaced points (one point sits in the middle). */
function spread(count) {
  return (index) => round(count > 1 ? MARGIN.left + (index * PLOT_W) / (count - 1) : MARGIN.left + PLOT_W / 2);
}

/**
 * Lines over days: series = [{name, values: [number|null per day], cls, dashed}].
 * A null value leaves a gap (a burndown stops at today while its ideal line runs to the end).
 */
export function lineChart({label, days, series, whole = false}) {
  const scale = axis(Math.max(0, ...series.flatMap((line) => line.values.filter((v) => v !== null))), whole);
  const x = spread(days.length);
  const {svg, y} = frame(label, scale, days.map(dayLabel), x);
  for (const line of series) {
    const points = line.values.map((value, index) => (value === null ? null : `${x(index)},${y(value)}`))
      .filter(Boolean);
    if (!points.length) continue;
    svg.append(s('polyline', {points: points.join(' '), class: `line ${line.cls}${line.dashed ? ' dashed' : ''}`}));
    line.values.forEach((value, index) => {
      if (value !== null && !line.dashed) {
        svg.append(s('circle', {cx: x(index), cy: y(value), r: 3, class: `dot ${line.cls}`},
          s('title', {}, `${day(days[index])}: ${number(value)}`)));
      }
    });
  }
  return svg;
}

/** Stacked areas over days: layers = [{name, values, cls}], the first layer at the bottom. */
export function stackedArea({label, days, layers}) {
  const totals = days.map((_, index) => layers.reduce((sum, layer) => sum + layer.values[index], 0));
  const single = days.length === 1;
  const x = single ? (index) => (index ? WIDTH - MARGIN.right : MARGIN.left) : spread(days.length);
  const columns = single ? [0, 1] : days.map((_, index) => index);
  const {svg, y} = frame(label, axis(Math.max(0, ...totals), true), days.map(dayLabel), spread(days.length));
  const below = days.map(() => 0);
  for (const layer of layers) {
    const above = below.map((value, index) => value + layer.values[index]);
    const at = (values, column) => values[single ? 0 : column];
    const top = columns.map((column) => `${x(column)},${y(at(above, column))}`);
    const bottom = columns.slice().reverse().map((column) => `${x(column)},${y(at(below, column))}`);
    svg.append(s('polygon', {points: [...top, ...bottom].join(' '), class: `area ${layer.cls}`},
      s('title', {}, `${layer.name}: ${number(layer.values[layer.values.length - 1])} на ${day(days[days.length - 1])}`)));
    above.forEach((value, index) => { below[index] = value; });
  }
  return svg;
}

/** Grouped bars: groups = [{name, values: [number per series]}], series = [{name, cls}]. */
export function barChart({label, groups, series, whole = false}) {
  const slot = PLOT_W / Math.max(1, groups.length);
  const x = (index) => round(MARGIN.left + slot * (index + 0.5));
  const {svg, y} = frame(label, axis(Math.max(0, ...groups.flatMap((group) => group.values)), whole),
    groups.map((group) => group.name), x);
  const width = Math.min(28, (slot * 0.8) / series.length);
  groups.forEach((group, index) => {
    group.values.forEach((value, which) => {
      const left = x(index) - (width * series.length) / 2 + which * width;
      svg.append(s('rect', {x: round(left), y: y(value), width: round(width - 2),
        height: round(MARGIN.top + PLOT_H - y(value)), class: `bar ${series[which].cls}`},
        s('title', {}, `${group.name}, ${series[which].name}: ${number(value)}`)));
    });
  });
  return svg;
}

/**
 * Points over time with horizontal reference lines: points = [{at: ms, value, title}],
 * lines = [{name, value, cls}], from/to = the time axis (ms), ticks = [{at: ms, text}].
 */
export function scatter({label, points, lines, from, to, ticks}) {
  const scale = axis(Math.max(0, ...points.map((p) => p.value), ...lines.map((l) => l.value ?? 0)));
  const span = Math.max(1, to - from);
  const xOf = (at) => round(MARGIN.left + ((at - from) / span) * PLOT_W);
  const {svg, y} = frame(label, scale, ticks.map((tick) => tick.text), (index) => xOf(ticks[index].at));
  for (const point of points) {
    svg.append(s('circle', {cx: xOf(point.at), cy: y(point.value), r: 4, class: 'dot series-0'},
      s('title', {}, point.title)));
  }
  for (const line of lines) {
    if (line.value === null || line.value === undefined) continue;
    svg.append(
      s('line', {x1: MARGIN.left, x2: WIDTH - MARGIN.right, y1: y(line.value), y2: y(line.value),
        class: `reference ${line.cls}`}),
      s('text', {x: WIDTH - MARGIN.right + 6, y: y(line.value) + 4, class: `reference-label ${line.cls}`},
        `${line.name} ${number(line.value)}`));
  }
  return svg;
}
