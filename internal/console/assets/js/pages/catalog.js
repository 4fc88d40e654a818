// Catalog: /ui/catalog (the sources) and /ui/catalog/<source>?q=&review_state=&after=&runs_before=
// (one source: its review queue, its tools page by page, its sync runs).

import {api, get, post, seg, query} from '../api.js';
import {h, fill, table, section, badge, progress, button, confirmButton, errorBox, notice, fmtTime, fmtInt, fmtDuration, dl, compact, every} from '../dom.js';

const PAGE = 50;
const RUNS = 20;

function syncState(last) {
  if (!last) {
    return h('span', {class: 'muted'}, 'never');
  }
  const kind = last.state === 'succeeded' ? 'ok' : last.state === 'failed' ? 'bad' : 'warn';
  return h('span', {}, badge(last.state, kind), ' ', fmtTime(last.started_at));
}

// failedBadge counts the tools one of whose enrichment steps failed for their current
// definition (stored with what they have).
function failedBadge(s) {
  return s.enrichment_failed ? [' ', badge(`${fmtInt(s.enrichment_failed)} failed`, 'bad')] : null;
}

// pendingBadge says how many tools still wait to be enriched and embedded, or that the
// source is fully enriched (nothing pending, nothing waiting for the lexical index).
function pendingBadge(s) {
  if (s.pending) return [' ', badge(`${fmtInt(s.pending)} pending`, 'warn')];
  return s.fully_enriched && s.tools ? [' ', badge('fully enriched', 'ok')] : null;
}

// busy is a source whose numbers are still moving: a sync queued or running, tools waiting
// to be enriched, embedded or indexed.
function busy(s) {
  if (!s.last_sync && s.kind !== 'catalog') {
    return true; // its first sync is queued
  }
  const st = s.last_sync && s.last_sync.state;
  return st === 'running' || st === 'queued' || s.pending > 0 || s.indexed < s.tools;
}

// REFRESH is how often a page with something in progress reads it again (ms).
const REFRESH = 2000;

export async function renderSources(root, ctx) {
  ctx.setTitle('Catalog');
  const status = h('div', {class: 'status', id: 'status'});
  root.append(h('h1', {}, 'Catalog'), status);
  const body = h('div', {id: 'sources'});
  root.append(body, section('Add a source', addSourceForm(status, ctx)));
  let moving = false;
  const load = quiet => fill(body, () => get('/v1/sources', {signal: ctx.signal}), data => {
    moving = data.sources.some(busy);
    return sourceTable(data);
  }, {quiet});
  await load(false);
  every(ctx.signal, REFRESH, () => moving && load(true));
}

function sourceTable(data) {
  return table([
    {title: 'Source', cell: s => h('a', {href: '/ui/catalog/' + seg(s.name), class: 'source-link'}, s.name)},
    {title: 'Kind', cell: s => s.kind},
    {title: 'Tools', class: 'num', cell: s => fmtInt(s.tools)},
    {title: 'Enriched', cell: s => [progress(s.enriched, s.tools), failedBadge(s), pendingBadge(s)]},
    {title: 'Embedded', cell: s => progress(s.embedded, s.tools)},
    {title: 'Indexed', cell: s => progress(s.indexed, s.tools)},
    {title: 'Last sync', cell: s => syncState(s.last_sync)},
    {title: 'Review', cell: s => s.review_mode ? badge('review mode', 'warn') : ''},
  ], data.sources, {empty: 'No source yet: add one below, or import a catalog with toolgate import.'});
}

// lines splits a text field into its non-empty lines.
const lines = v => v.split('\n').map(x => x.trim()).filter(Boolean);

// addSourceForm creates an MCP source (HTTP or stdio: its first sync is queued) or a catalog
// source with its tools (a JSON array, or one tool per line), then opens its page.
function addSourceForm(status, ctx) {
  const kind = h('select', {id: 'src-kind', name: 'kind'},
    [['mcp_http', 'MCP server over HTTP'], ['mcp_stdio', 'MCP server over stdio'], ['catalog', 'catalog (pushed tools)']]
      .map(([v, l]) => h('option', {value: v}, l)));
  const name = h('input', {id: 'src-name', name: 'name', required: true, placeholder: 'a-z 0-9 -', pattern: '[a-z0-9-]{1,32}'});
  const url = h('input', {id: 'src-url', name: 'url', placeholder: 'https://host/mcp', size: 40});
  const headers = h('textarea', {id: 'src-headers', name: 'headers', rows: 2, placeholder: 'Authorization: Bearer …'});
  const command = h('input', {id: 'src-command', name: 'command', placeholder: 'npx'});
  const args = h('textarea', {id: 'src-args', name: 'args', rows: 2, placeholder: 'one argument per line'});
  const env = h('textarea', {id: 'src-env', name: 'env', rows: 2, placeholder: 'NAME=value, one per line'});
  const tools = h('textarea', {id: 'src-tools', name: 'tools', rows: 4, cols: 60, placeholder: '{"name":"get_weather","description":"…","input_schema":{"type":"object"}}'});
  const interval = h('input', {id: 'src-interval', name: 'interval', placeholder: 'default, or 10m, or off', size: 12});
  const review = h('input', {id: 'src-review', name: 'review_mode', type: 'checkbox'});
  const only = (k, ...nodes) => nodes.map(n => h('label', {'data-kind': k}, n[0], n[1]));
  const f = h('form', {id: 'source-form', class: 'grid-form'},
    h('label', {}, 'Kind', kind), h('label', {}, 'Name', name),
    only('mcp_http', ['URL', url], ['Headers', headers]),
    only('mcp_stdio', ['Command', command], ['Arguments', args], ['Environment', env]),
    only('catalog', ['Tools', tools]),
    only('mcp', ['Sync interval', interval], ['Review mode', review]),
    h('button', {type: 'submit', id: 'src-create'}, 'Add source'));
  const show = () => {
    for (const l of f.querySelectorAll('label[data-kind]')) {
      const k = l.dataset.kind;
      l.hidden = !(k === kind.value || (k === 'mcp' && kind.value !== 'catalog'));
    }
  };
  kind.addEventListener('change', show);
  show();
  f.addEventListener('submit', async e => {
    e.preventDefault();
    const body = {name: name.value.trim(), kind: kind.value};
    try {
      if (kind.value === 'catalog') {
        const text = tools.value.trim();
        body.tools = text.startsWith('[') ? JSON.parse(text) : lines(text).map(l => JSON.parse(l));
      } else {
        if (interval.value.trim()) {
          body.interval = interval.value.trim();
        }
        body.review_mode = review.checked;
      }
      if (kind.value === 'mcp_http') {
        body.url = url.value.trim();
        body.headers = Object.fromEntries(lines(headers.value).map(l => [l.slice(0, l.indexOf(':')).trim(), l.slice(l.indexOf(':') + 1).trim()]));
      }
      if (kind.value === 'mcp_stdio') {
        body.command = command.value.trim();
        body.args = lines(args.value);
        body.env = Object.fromEntries(lines(env.value).map(l => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
      }
    } catch (err) {
      status.replaceChildren(errorBox({code: 'invalid_input', message: `tools: not JSON (${err.message})`}));
      return;
    }
    try {
      await post('/v1/sources', body);
      ctx.navigate('/ui/catalog/' + seg(body.name));
    } catch (err) {
      status.replaceChildren(errorBox(err));
    }
  });
  return f;
}

export async function renderSource(root, ctx) {
  const [name] = ctx.groups;
  const p = ctx.url.searchParams;
  ctx.setTitle(`Source ${name}`);
  root.append(h('p', {class: 'crumbs'}, h('a', {href: '/ui/catalog'}, 'Catalog'), ' / ', name), h('h1', {}, name));
  const head = h('div', {id: 'source-head'});
  const review = h('div', {id: 'review-queue'});
  const tools = h('div', {id: 'tools'});
  const runs = h('div', {id: 'runs'});
  const status = h('div', {class: 'status', id: 'status'});
  root.append(section('Source', head), status, section('Review queue', review), section('Tools', toolFilter(name, p, ctx), tools), section('Sync runs', runs));
  const base = '/v1/sources/' + seg(name);
  const opts = {signal: ctx.signal};
  // after a decision: say what it did, and show the source, its queue and its tools again
  const decided = msg => {
    status.replaceChildren(notice(msg, 'ok'));
    loadHead();
    loadReview();
    loadTools();
  };
  let moving = false;
  const loadHead = quiet => fill(head, () => get(base, opts), src => {
    moving = busy(src);
    return sourceHead(src, status, ctx, () => loadHead(true));
  }, {quiet});
  const loadReview = () => fill(review, () => get('/v1/tools' + query({source: name, review_state: 'pending', limit: PAGE}), opts),
    data => reviewQueue(data, status, decided));
  const loadTools = quiet => fill(tools, () => get('/v1/tools' + query({source: name, review_state: p.get('review_state'), q: p.get('q'),
    after: p.get('after'), limit: PAGE}), opts), data => toolPage(data, name, p), {quiet});
  const loadRuns = quiet => fill(runs, () => get(base + '/runs' + query({limit: RUNS, before: p.get('runs_before')}), opts),
    data => runTable(data, name, p), {quiet});
  await Promise.all([loadHead(false), loadReview(), loadTools(false), loadRuns(false)]);
  // While a sync or the enrichment is in progress the page follows it, and once more after.
  every(ctx.signal, REFRESH, async () => {
    if (moving) {
      await Promise.all([loadHead(true), loadTools(true), loadRuns(true)]);
      if (!moving) {
        loadReview();
      }
    }
  });
}

function sourceHead(src, status, ctx, saved) {
  const cfg = src.config || {};
  const where = cfg.url || [cfg.command, ...(cfg.args || [])].filter(Boolean).join(' ');
  const nodes = [dl([
    ['Kind', src.kind], ['Server', where], ['Sync interval', src.interval], ['Review mode', src.review_mode ? 'on: changed definitions wait for a decision' : 'off'],
    ['Tools', fmtInt(src.tools)], ['Enriched', [progress(src.enriched, src.tools), failedBadge(src), pendingBadge(src)]], ['Embedded', progress(src.embedded, src.tools)],
    ['Indexed', progress(src.indexed, src.tools)], ['Created', fmtTime(src.created_at)],
  ])];
  if (src.authorization) {
    nodes.push(authorization(src, status, saved));
  }
  if (src.kind !== 'catalog') {
    nodes.push(h('p', {}, button('Sync now', async () => {
      try {
        const r = await post('/v1/sources/' + seg(src.name) + '/sync');
        status.replaceChildren(notice(r.duplicate ? `A sync is already queued or running (job ${r.job_id}).` : `Sync queued (job ${r.job_id}).`, 'ok'));
      } catch (err) {
        status.replaceChildren(errorBox(err));
      }
    }, {id: 'sync-now'})));
    nodes.push(settingsForm(src, status, saved));
  }
  nodes.push(h('p', {}, confirmButton('Delete source', `Delete ${src.name} and its ${fmtInt(src.tools)} tools? What was learned about them goes too.`, async () => {
    try {
      await api('DELETE', '/v1/sources/' + seg(src.name));
      ctx.navigate('/ui/catalog');
    } catch (err) {
      status.replaceChildren(errorBox(err));
    }
  }, {id: 'delete-source', class: 'cancel'})));
  return nodes;
}

// settingsForm changes an MCP source's sync interval and review mode (PATCH), then calls
// saved.
// authorization shows the OAuth authorization of a source configured for OAuth, with its
// actions: Authorize opens the authorization server's sign-in page in a new tab (which comes
// back to toolgate's callback), Revoke forgets the tokens.
function authorization(src, status, saved) {
  const a = src.authorization;
  const kind = a.state === 'authorized' ? 'ok' : a.state === 'refresh_failed' ? 'bad' : 'warn';
  const state = [badge(a.state.replace('_', ' '), kind)];
  if (a.error) state.push(' ', h('span', {class: 'muted', id: 'authorization-error'}, a.error));
  const rows = [['Authorization', state]];
  if (a.issuer) rows.push(['Authorization server', a.issuer]);
  if (a.expires_at) rows.push(['Token expires', fmtTime(a.expires_at)]);
  const base = '/v1/sources/' + seg(src.name) + '/oauth/';
  const actions = h('p', {}, button('Authorize', async () => {
    try {
      const r = await post(base + 'authorize');
      window.open(r.authorization_url, '_blank', 'noopener');
      status.replaceChildren(notice(h('span', {}, 'Sign in at the authorization server in the new tab (',
        h('a', {href: r.authorization_url, target: '_blank', rel: 'noopener'}, 'open it'), '), then reload this page.'), 'ok'));
    } catch (err) {
      status.replaceChildren(errorBox(err));
    }
  }, {id: 'authorize-source'}));
  if (a.state !== 'unauthorized') {
    actions.append(' ', confirmButton('Revoke', `Forget the tokens of ${src.name} and ask its authorization server to revoke them? Its tools cannot be called until it is authorized again.`, async () => {
      try {
        const r = await post(base + 'revoke');
        status.replaceChildren(notice(r.revoked_at_server ? 'Tokens revoked.' : `Tokens forgotten; the authorization server did not revoke them${r.error ? ': ' + r.error : ''}.`, 'ok'));
        saved();
      } catch (err) {
        status.replaceChildren(errorBox(err));
      }
    }, {id: 'revoke-source'}));
  }
  return h('div', {id: 'authorization'}, dl(rows), actions);
}

function settingsForm(src, status, saved) {
  const interval = h('input', {id: 'set-interval', value: src.interval || '', size: 10});
  const review = h('input', {id: 'set-review', type: 'checkbox', checked: src.review_mode});
  const f = h('form', {id: 'source-settings', class: 'inline-form'},
    h('label', {}, 'Sync interval ', interval), h('label', {}, review, ' review mode'),
    h('button', {type: 'submit', id: 'set-save'}, 'Save'));
  f.addEventListener('submit', async e => {
    e.preventDefault();
    try {
      await api('PATCH', '/v1/sources/' + seg(src.name), {interval: interval.value.trim(), review_mode: review.checked});
      status.replaceChildren(notice(`Settings of ${src.name} saved.`, 'ok'));
      saved();
    } catch (err) {
      status.replaceChildren(errorBox(err));
    }
  });
  return f;
}

function decide(tool, action, status, decided) {
  return button(action === 'approve' ? 'Approve' : 'Reject', async () => {
    try {
      const r = await post('/v1/tools/' + seg(tool.name) + '/' + action);
      decided(action === 'approve' ? `${r.name} approved: its new definition is stored and searchable.` :
        `${r.name}: change rejected; the tool keeps its old definition and stays hidden.`);
    } catch (err) {
      status.replaceChildren(errorBox(err));
    }
  }, {class: action, 'data-tool': tool.name});
}

function reviewQueue(data, status, decided) {
  return [
    table([
      {title: 'Tool', cell: t => h('a', {href: '/ui/tool/' + seg(t.name)}, t.name)},
      {title: 'Stored definition', cell: t => h('span', {class: 'desc'}, t.description)},
      {title: 'Held since', cell: t => fmtTime(t.updated_at)},
      {title: '', cell: t => h('span', {class: 'actions'}, decide(t, 'approve', status, decided), ' ', decide(t, 'reject', status, decided))},
    ], data.tools, {empty: 'No tool waits for review.'}),
    data.next ? h('p', {class: 'muted'}, `Only the first ${PAGE} are shown.`) : null,
  ];
}

function toolFilter(name, p, ctx) {
  const q = h('input', {name: 'q', value: p.get('q') || '', placeholder: 'part of the name', id: 'tool-q'});
  const rs = h('select', {name: 'review_state', id: 'tool-review-state'},
    [['', 'any review state'], ['approved', 'approved'], ['pending', 'pending']].map(([v, l]) => h('option', {value: v, selected: v === (p.get('review_state') || '')}, l)));
  const f = h('form', {class: 'inline-form'}, q, rs, h('button', {type: 'submit'}, 'Filter'));
  f.addEventListener('submit', e => {
    e.preventDefault();
    ctx.navigate('/ui/catalog/' + seg(name) + query({q: q.value.trim(), review_state: rs.value}));
  });
  return f;
}

function toolStates(t) {
  return h('span', {class: 'states'},
    t.enabled ? null : badge('disabled', 'bad'),
    t.review_state === 'pending' ? badge('pending', 'warn') : null,
    badge(t.enriched ? 'enriched' : 'not enriched', t.enriched ? 'ok' : ''),
    badge(t.embedded ? 'embedded' : 'no vector', t.embedded ? 'ok' : ''));
}

function toolPage(data, name, p) {
  const keep = {q: p.get('q'), review_state: p.get('review_state')};
  return [
    table([
      {title: 'Tool', cell: t => h('a', {href: '/ui/tool/' + seg(t.name)}, t.name)},
      {title: 'Description', cell: t => h('span', {class: 'desc'}, t.title ? `${t.title} — ${t.description}` : t.description)},
      {title: 'State', cell: toolStates},
      {title: 'Updated', cell: t => fmtTime(t.updated_at)},
    ], data.tools, {empty: 'No tool matches.'}),
    h('p', {class: 'pager'},
      p.get('after') ? h('a', {href: '/ui/catalog/' + seg(name) + query(keep)}, '« First page') : null, ' ',
      data.next ? h('a', {href: '/ui/catalog/' + seg(name) + query({...keep, after: data.next}), id: 'tools-next'}, 'Next page »') : null),
  ];
}

function runTable(data, name, p) {
  const dur = r => r.finished_at ? fmtDuration(new Date(r.finished_at) - new Date(r.started_at)) : 'running';
  return [
    table([
      {title: 'Started', cell: r => fmtTime(r.started_at)},
      {title: 'State', cell: r => badge(r.state, r.state === 'succeeded' ? 'ok' : r.state === 'failed' ? 'bad' : 'warn')},
      {title: 'Took', cell: dur},
      {title: 'Created', class: 'num', cell: r => fmtInt(r.created)},
      {title: 'Updated', class: 'num', cell: r => fmtInt(r.updated)},
      {title: 'Deleted', class: 'num', cell: r => fmtInt(r.deleted)},
      {title: 'Unchanged', class: 'num', cell: r => fmtInt(r.unchanged)},
      {title: 'Held', class: 'num', cell: r => fmtInt(r.pending)},
      {title: 'Skipped', class: 'num', cell: r => (r.skipped || []).length ? h('span', {title: compact(r.skipped, 2000)}, fmtInt(r.skipped.length)) : '0'},
      {title: 'Error', cell: r => r.error ? h('span', {class: 'err-text'}, r.error) : ''},
    ], data.runs, {empty: 'No sync run yet.'}),
    h('p', {class: 'pager'},
      p.get('runs_before') ? h('a', {href: '/ui/catalog/' + seg(name)}, '« Newest runs') : null, ' ',
      data.next ? h('a', {href: '/ui/catalog/' + seg(name) + query({runs_before: data.next})}, 'Older runs »') : null),
  ];
}
