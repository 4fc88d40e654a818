// Charts drawn as SVG: time series, intervals and small bars. Colours come from the
// stylesheet (classes series-0, series-1, ...).

import {h, s} from './dom.js';

const W = 760;

function ticks(lo, hi, n) {
  if (hi <= lo) {
    return [lo];
  }
  const raw = (hi - lo) / n;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 2.5, 5, 10].map(m => m * mag).find(st => st >= raw) || raw;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) {
    out.push(Number(v.toFixed(10)));
  }
  return out;
}

function legend(names) {
  return h('div', {class: 'legend'}, names.map((n, i) =>
    h('span', {class: 'key'}, h('span', {class: 'swatch series-' + (i % 6)}), n)));
}

function dayLabel(ms, withHour) {
  const d = new Date(ms);
  const pad = n => String(n).padStart(2, '0');
  const day = `${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
  return withHour ? `${day} ${pad(d.getHours())}:00` : day;
}

// lineChart draws series [{name, points: [[timeMs, y], ...]}] over a time axis.
// width is the chart's width in the page's pixels, about: its text is drawn at its size.
export function lineChart(series, {yFormat = v => String(v), yMax, height = 220, label = 'chart', width = W} = {}) {
  const pts = series.flatMap(se => se.points);
  if (pts.length === 0) {
    return h('p', {class: 'muted empty'}, 'No data in this window.');
  }
  const m = {l: 52, r: 14, t: 10, b: 26};
  let x0 = Math.min(...pts.map(p => p[0]));
  let x1 = Math.max(...pts.map(p => p[0]));
  if (x1 === x0) {
    x0 -= 3600e3;
    x1 += 3600e3;
  }
  const top = yMax ?? Math.max(...pts.map(p => p[1]), 0);
  const y1 = top > 0 ? top * (yMax === undefined ? 1.1 : 1) : 1;
  const X = x => m.l + (x - x0) / (x1 - x0) * (width - m.l - m.r);
  const Y = y => height - m.b - y / y1 * (height - m.t - m.b);
  const withHour = x1 - x0 < 3 * 86400e3;
  const svg = s('svg', {viewBox: `0 0 ${width} ${height}`, width: '100%', role: 'img', 'aria-label': label, class: 'chart-svg'});
  for (const v of ticks(0, y1, 4)) {
    svg.append(s('line', {x1: m.l, x2: width - m.r, y1: Y(v), y2: Y(v), class: 'grid'}),
      s('text', {x: m.l - 6, y: Y(v) + 4, class: 'tick', 'text-anchor': 'end'}, yFormat(v)));
  }
  // the times of the points when they are few (daily buckets), else six even ticks
  const times = [...new Set(pts.map(p => p[0]))].sort((a, b) => a - b);
  const xt = times.length <= 10 ? times : [0, 1, 2, 3, 4, 5].map(i => x0 + (x1 - x0) * i / 5);
  for (const v of xt) {
    const anchor = v === x0 ? 'start' : v === x1 ? 'end' : 'middle';
    svg.append(s('text', {x: X(v), y: height - 8, class: 'tick', 'text-anchor': anchor}, dayLabel(v, withHour)));
  }
  svg.append(s('line', {x1: m.l, x2: width - m.r, y1: Y(0), y2: Y(0), class: 'axis'}));
  series.forEach((se, i) => {
    const sorted = [...se.points].sort((a, b) => a[0] - b[0]);
    const cls = 'series-' + (i % 6);
    svg.append(s('polyline', {points: sorted.map(p => `${X(p[0]).toFixed(1)},${Y(p[1]).toFixed(1)}`).join(' '), class: 'line ' + cls}));
    for (const p of sorted) {
      svg.append(s('circle', {cx: X(p[0]).toFixed(1), cy: Y(p[1]).toFixed(1), r: 2.5, class: 'dot ' + cls},
        s('title', {}, `${se.name} · ${dayLabel(p[0], withHour)} · ${yFormat(p[1])}`)));
    }
  });
  return h('figure', {class: 'chart'}, svg, legend(series.map(se => se.name)));
}

// intervalChart draws rows [{label, value, lo, hi}] as a dot with its interval, on one
// horizontal scale (with 0 on it when zero is set).
export function intervalChart(rows, {format = v => v.toFixed(2), zero = false, label = 'intervals', width = W} = {}) {
  const usable = rows.filter(r => r.value !== null && r.value !== undefined);
  if (usable.length === 0) {
    return h('p', {class: 'muted empty'}, 'No estimate yet.');
  }
  const vals = usable.flatMap(r => [r.value, r.lo ?? r.value, r.hi ?? r.value]);
  if (zero) {
    vals.push(0);
  }
  let lo = Math.min(...vals);
  let hi = Math.max(...vals);
  if (hi === lo) {
    lo -= 0.5;
    hi += 0.5;
  }
  const pad = (hi - lo) * 0.08;
  lo -= pad;
  hi += pad;
  // The left margin holds the longest row label (about 7 px a character at the labels'
  // size), up to half the chart; a longer label is cut with an ellipsis, whole in its title.
  const maxLabel = Math.floor((width / 2 - 16) / 7);
  const m = {l: Math.min(width / 2, Math.max(150, 16 + 7 * Math.max(...rows.map(r => r.label.length)))), r: 20, t: 8, b: 24};
  const rowH = 26;
  const height = m.t + m.b + rowH * rows.length;
  const X = v => m.l + (v - lo) / (hi - lo) * (width - m.l - m.r);
  const svg = s('svg', {viewBox: `0 0 ${width} ${height}`, width: '100%', role: 'img', 'aria-label': label, class: 'chart-svg'});
  for (const v of ticks(lo, hi, 5)) {
    svg.append(s('line', {x1: X(v), x2: X(v), y1: m.t, y2: height - m.b, class: 'grid'}),
      s('text', {x: X(v), y: height - 8, class: 'tick', 'text-anchor': 'middle'}, format(v)));
  }
  if (zero) {
    svg.append(s('line', {x1: X(0), x2: X(0), y1: m.t, y2: height - m.b, class: 'axis'}));
  }
  rows.forEach((r, i) => {
    const y = m.t + rowH * i + rowH / 2;
    const cls = 'series-' + (i % 6);
    const shown = r.label.length > maxLabel ? r.label.slice(0, maxLabel - 1) + '…' : r.label;
    svg.append(s('text', {x: m.l - 10, y: y + 4, class: 'row-label', 'text-anchor': 'end'}, s('title', {}, r.label), shown));
    if (r.value === null || r.value === undefined) {
      svg.append(s('text', {x: m.l + 4, y: y + 4, class: 'tick'}, 'no data'));
      return;
    }
    if (r.lo !== null && r.lo !== undefined && r.hi !== null && r.hi !== undefined) {
      svg.append(s('line', {x1: X(r.lo), x2: X(r.hi), y1: y, y2: y, class: 'whisker ' + cls}),
        s('line', {x1: X(r.lo), x2: X(r.lo), y1: y - 5, y2: y + 5, class: 'whisker ' + cls}),
        s('line', {x1: X(r.hi), x2: X(r.hi), y1: y - 5, y2: y + 5, class: 'whisker ' + cls}));
    }
    const range = r.lo !== null && r.lo !== undefined ? ` [${format(r.lo)}, ${format(r.hi)}]` : '';
    svg.append(s('circle', {cx: X(r.value), cy: y, r: 4.5, class: 'dot ' + cls},
      s('title', {}, `${r.label}: ${format(r.value)}${range}`)));
  });
  return h('figure', {class: 'chart'}, svg);
}

// bar is a small horizontal bar of value out of max.
export function bar(value, max, title) {
  const w = 80;
  const fill = max > 0 ? Math.max(0, Math.min(1, value / max)) * w : 0;
  return s('svg', {viewBox: `0 0 ${w} 10`, width: w, height: 10, class: 'bar', role: 'img', 'aria-label': title},
    s('rect', {x: 0, y: 0, width: w, height: 10, class: 'bar-bg'}),
    s('rect', {x: 0, y: 0, width: fill.toFixed(1), height: 10, class: 'bar-fill'}),
    s('title', {}, title));
}

// shares is a stacked bar of parts [{label, value}] (their sum is the whole).
export function shares(parts) {
  const w = 120;
  const total = parts.reduce((a, p) => a + Math.max(p.value, 0), 0);
  const svg = s('svg', {viewBox: `0 0 ${w} 10`, width: w, height: 10, class: 'bar', role: 'img', 'aria-label': 'shares of the fused score'},
    s('rect', {x: 0, y: 0, width: w, height: 10, class: 'bar-bg'}));
  let x = 0;
  parts.forEach((p, i) => {
    if (total <= 0 || p.value <= 0) {
      return;
    }
    const pw = p.value / total * w;
    svg.append(s('rect', {x: x.toFixed(1), y: 0, width: pw.toFixed(1), height: 10, class: 'part series-' + i},
      s('title', {}, `${p.label}: ${p.value.toFixed(3)}`)));
    x += pw;
  });
  return svg;
}
