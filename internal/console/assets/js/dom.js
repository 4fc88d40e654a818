// DOM helpers. Every text that reaches the page, from the API or from the URL, goes in
// as a text node or an attribute value: no HTML string is ever parsed.

const SVG = 'http://www.w3.org/2000/svg';

// props sets the attributes and listeners of node: on is {event: handler}; value,
// checked, disabled and selected are set as properties; anything else as an attribute.
function props(node, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) {
      continue;
    }
    if (k === 'on') {
      for (const [ev, fn] of Object.entries(v)) {
        node.addEventListener(ev, fn);
      }
    } else if (/^on/i.test(k)) {
      throw new Error('event handlers are added with {on: {...}}, not as attributes: ' + k);
    } else if (k === 'value' || k === 'checked' || k === 'disabled' || k === 'selected') {
      node[k] = v;
    } else {
      node.setAttribute(k, v === true ? '' : String(v));
    }
  }
}

function append(node, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) {
      continue;
    }
    if (Array.isArray(c)) {
      append(node, c);
    } else if (c instanceof Node) {
      node.append(c);
    } else {
      node.append(document.createTextNode(String(c)));
    }
  }
}

// h makes an HTML element.
export function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  props(node, attrs);
  append(node, children);
  return node;
}

// s makes an SVG element.
export function s(tag, attrs, ...children) {
  const node = document.createElementNS(SVG, tag);
  props(node, attrs);
  append(node, children);
  return node;
}

export function clear(node) {
  node.replaceChildren();
}

// errorBox shows a failed call: the API's code and message, as text.
export function errorBox(err) {
  const code = err && err.code ? err.code + ': ' : '';
  const msg = err && err.message ? err.message : String(err);
  return h('div', {class: 'error', role: 'alert'}, code + msg);
}

export function notice(text, kind = 'info') {
  return h('div', {class: 'notice ' + kind}, text);
}

export function section(title, ...children) {
  return h('section', {}, h('h2', {}, title), ...children);
}

export function badge(text, kind = '') {
  return h('span', {class: ('badge ' + kind).trim()}, text);
}

export function link(href, text) {
  return h('a', {href}, text);
}

export function button(text, onClick, attrs = {}) {
  return h('button', {type: 'button', ...attrs, on: {click: onClick}}, text);
}

// every calls f every ms milliseconds, each call after the previous one finished, until
// signal aborts (the page is left).
export function every(signal, ms, f) {
  const tick = async () => {
    if (signal.aborted) {
      return;
    }
    try {
      await f();
    } catch (err) {
      if (err.name === 'AbortError') {
        return;
      }
    }
    if (!signal.aborted) {
      setTimeout(tick, ms);
    }
  };
  setTimeout(tick, ms);
}

// confirmButton is a button whose action runs only once confirmed: a click replaces it with
// the question and a confirming and a cancelling button (classes confirm and cancel-confirm).
export function confirmButton(text, question, onConfirm, attrs = {}) {
  const wrap = h('span', {class: 'confirmable'});
  const ask = button(text, () => {
    const yes = button(text, async () => {
      wrap.replaceChildren(h('span', {class: 'muted'}, '…'));
      await onConfirm();
    }, {class: 'confirm danger'});
    const no = button('Cancel', () => wrap.replaceChildren(ask), {class: 'cancel-confirm'});
    wrap.replaceChildren(h('span', {class: 'question'}, question), ' ', yes, ' ', no);
  }, attrs);
  wrap.append(ask);
  return wrap;
}

// table makes a table of rows; columns are {title, cell(row) -> node or text, class}.
export function table(columns, rows, {empty = 'Nothing to show.', cls = ''} = {}) {
  if (!rows || rows.length === 0) {
    return h('p', {class: 'muted empty'}, empty);
  }
  return h('div', {class: 'table-wrap'},
    h('table', {class: cls},
      h('thead', {}, h('tr', {}, columns.map(c => h('th', {class: c.class}, c.title)))),
      h('tbody', {}, rows.map(r => h('tr', {}, columns.map(c => h('td', {class: c.class}, c.cell(r))))))));
}

// dl makes a definition list of [term, value] pairs, leaving out empty values.
export function dl(pairs) {
  return h('dl', {class: 'facts'}, pairs.filter(([, v]) => v !== undefined && v !== null && v !== '')
    .map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

export function pre(text, cls = '') {
  return h('pre', {class: cls}, text);
}

export function json(value) {
  return pre(JSON.stringify(value, null, 2), 'json');
}

// progress shows done of total as a bar with its numbers.
export function progress(done, total) {
  return h('span', {class: 'progress'},
    h('progress', {max: Math.max(total, 1), value: done}),
    h('span', {class: 'num'}, `${fmtInt(done)} / ${fmtInt(total)}`));
}

// loading is a placeholder replaced by what load puts in its place.
export function loading() {
  return h('p', {class: 'muted loading'}, 'Loading…');
}

// fill replaces the children of node by what render(data) makes of the answer of call,
// or by the error box of its failure. An aborted call (the page was left) changes nothing.
// A quiet fill (a refresh) keeps the old children until the answer is there.
export async function fill(node, call, render, {quiet = false} = {}) {
  if (!quiet) {
    clear(node);
    node.append(loading());
  }
  let data;
  try {
    data = await call();
  } catch (err) {
    if (err.name === 'AbortError') {
      return;
    }
    node.replaceChildren(errorBox(err));
    return;
  }
  node.replaceChildren(...[render(data)].flat(Infinity).filter(Boolean));
}

export function fmtInt(n) {
  return n === null || n === undefined ? '–' : Number(n).toLocaleString('en-US');
}

export function fmtNum(n, digits = 3) {
  if (n === null || n === undefined || Number.isNaN(n)) {
    return '–';
  }
  return Number(n).toFixed(digits);
}

export function fmtPct(x, digits = 1) {
  if (x === null || x === undefined) {
    return '–';
  }
  return (100 * x).toFixed(digits) + '%';
}

export function fmtTime(iso) {
  if (!iso) {
    return '–';
  }
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) {
    return String(iso);
  }
  const pad = n => String(n).padStart(2, '0');
  // a no-break space: a time never wraps between its date and its hour
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}\u00a0${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

export function fmtDuration(ms) {
  if (ms === null || ms === undefined) {
    return '–';
  }
  if (ms < 1000) {
    return `${Math.round(ms)} ms`;
  }
  if (ms < 120000) {
    return `${(ms / 1000).toFixed(1)} s`;
  }
  return `${Math.round(ms / 60000)} min`;
}

// compact shows a JSON value on one line, cut at max characters.
export function compact(value, max = 120) {
  if (value === null || value === undefined) {
    return '';
  }
  const t = typeof value === 'string' ? value : JSON.stringify(value);
  return t.length > max ? t.slice(0, max - 1) + '…' : t;
}
