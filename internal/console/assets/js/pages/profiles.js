// Profiles: /ui/profiles. Every weight profile's weights side by side, with its vector
// sets and the buttons to rebuild its vectors, edit it, make it the active profile or
// delete it; a form that creates or changes a profile, re-weights it, follows the
// re-weight and compares its results with the active profile's on the operator's queries;
// and the tunes (weights fitted to labelled searches) with their held-out evidence.

import {api, get, post, seg} from '../api.js';
import {h, fill, table, section, badge, button, confirmButton, errorBox, notice, progress, every, fmtTime, fmtNum, fmtInt} from '../dom.js';
import {bar, intervalChart} from '../chart.js';

// kinds in the order docs/profiles.md lists them; kinds only a profile knows follow.
const kindOrder = ['name', 'description', 'parameters', 'question', 'topics', 'profile_function', 'profile_tags',
  'profile_when_to_use', 'profile_limitation', 'profile_example_usage', 'observed', 'expansion'];

// REFRESH is how often the page reads the profiles again while a re-weight runs.
const REFRESH = 1000;
// TOP is how many results of each profile the comparison shows.
const TOP = 5;

export async function render(root, ctx) {
  ctx.setTitle('Profiles');
  const status = h('div', {class: 'status', id: 'status'});
  const weights = h('div', {id: 'profiles'});
  const editor = h('div', {id: 'profile-editor'});
  const compare = h('div', {id: 'compare'});
  const tunes = h('div', {id: 'tunes'});
  root.append(h('h1', {}, 'Weight profiles'), status, section('Weights', weights),
    section('Create or change a profile', editor, compare), section('Tunes', tunes),
    h('p', {class: 'muted'}, 'A/B experiments between profiles: ', h('a', {href: '/ui/experiments'}, 'Experiments'), '.'));
  const opts = {signal: ctx.signal};
  // pending is the comparison waiting for its profile's re-weight: {name, setID, queries,
  // baseline, before}; moving is true while some profile's re-weight is in progress.
  let pending = null;
  let moving = false;
  const form = profileForm(ctx, status, async req => {
    pending = req;
    moving = true;
    compare.replaceChildren(reweightLine(req.name, null));
    await load(true);
  });
  editor.append(form.node);
  const load = quiet => fill(weights, () => get('/admin/profiles', opts), d => {
    moving = d.profiles.some(p => p.building);
    if (pending) {
      follow(d.profiles.find(p => p.name === pending.name));
    }
    return profileTable(d.profiles, status, () => load(true), form.edit);
  }, {quiet});
  // follow shows the pending re-weight's progress and, once its set is current, the comparison.
  const follow = p => {
    const req = pending;
    if (!p) {
      pending = null;
      return;
    }
    if (p.current_set && p.current_set.id === req.setID) {
      pending = null;
      fill(compare, () => searchAll(req.queries, req.name, opts), after => diffView(req, after));
      return;
    }
    const set = p.building && p.building.id === req.setID ? p.building : null;
    if (set && set.state === 'failed') {
      pending = null;
      compare.replaceChildren(errorBox({code: 'reweight_failed', message: `The re-weight of ${req.name} failed: ${set.error || 'no reason given'}`}));
      return;
    }
    compare.replaceChildren(reweightLine(req.name, set));
  };
  await Promise.all([
    load(false),
    fill(tunes, () => get('/admin/tunes', opts), d => tuneTable(d.tunes)),
  ]);
  every(ctx.signal, REFRESH, () => (moving || pending) && load(true));
}

function reweightLine(name, set) {
  return h('p', {id: 'reweight-progress'}, `Re-weighting ${name}: `,
    set ? progress(set.done, set.total) : h('span', {class: 'muted'}, 'queued'));
}

// searchAll runs each query with profile and answers the top results' names per query.
async function searchAll(queries, profile, opts) {
  return Promise.all(queries.map(async q => {
    const r = await post('/search', {query: q, k: TOP, profile}, opts);
    return r.results.map(x => x.name);
  }));
}

// profileForm is the form that creates or changes a profile (strategy, a weight per kind,
// fusion weights) and names the queries to compare it on. Saving searches those queries
// with the active profile first (its fusion weights take effect at once, so the "before"
// must be read before), then PUTs the profile and queues its re-weight; onStarted is told
// what to compare. edit(p) fills the form with profile p.
function profileForm(ctx, status, onStarted) {
  const name = h('input', {id: 'pf-name', name: 'name', required: true, placeholder: 'e.g. questions-heavy', maxlength: 64});
  const strategy = h('select', {id: 'pf-strategy', name: 'strategy'},
    ['tdwa', 'concat', 'mean'].map(s => h('option', {value: s}, s)));
  const inputs = Object.fromEntries(kindOrder.map(k => [k, h('input', {id: 'pf-w-' + k, name: k, type: 'number', min: 0, step: 0.05, placeholder: '0'})]));
  const lexical = h('input', {id: 'pf-lexical', name: 'weight_lexical', type: 'number', min: 0, max: 100, step: 0.1, placeholder: 'service'});
  const vector = h('input', {id: 'pf-vector', name: 'weight_vector', type: 'number', min: 0, max: 100, step: 0.1, placeholder: 'service'});
  const queries = h('textarea', {id: 'pf-queries', name: 'queries', rows: 3, cols: 60, placeholder: 'one query a line'});
  const weightBox = h('div', {class: 'grid-form weights-form'}, kindOrder.map(k => h('label', {}, k, inputs[k])));
  const showWeights = () => {
    weightBox.hidden = strategy.value !== 'tdwa';
  };
  strategy.addEventListener('change', showWeights);
  const f = h('form', {id: 'profile-form'},
    h('div', {class: 'grid-form'}, h('label', {}, 'Name', name), h('label', {}, 'Strategy', strategy),
      h('label', {}, 'Fusion weight, lexical', lexical), h('label', {}, 'Fusion weight, vector', vector)),
    h('h3', {}, 'Weight of each kind'), weightBox,
    h('h3', {}, 'Compare on these queries'),
    h('p', {class: 'muted'}, `Saving stores the profile, re-weights it and then shows the top ${TOP} of each query with the active profile (as it was before the change) and with this one.`),
    h('div', {class: 'grid-form'}, h('label', {}, 'Queries', queries),
      h('button', {type: 'submit', id: 'pf-save'}, 'Save, re-weight and compare')));
  f.addEventListener('submit', async e => {
    e.preventDefault();
    const body = {strategy: strategy.value};
    if (strategy.value === 'tdwa') {
      body.weights = {};
      for (const [k, input] of Object.entries(inputs)) {
        const v = parseFloat(input.value);
        if (v > 0) {
          body.weights[k] = v;
        }
      }
    }
    if (lexical.value.trim() !== '' || vector.value.trim() !== '') {
      body.fusion = {weight_lexical: parseFloat(lexical.value || '0'), weight_vector: parseFloat(vector.value || '0')};
    }
    const qs = queries.value.split('\n').map(q => q.trim()).filter(Boolean);
    const target = name.value.trim();
    try {
      const {profiles} = await get('/admin/profiles', {signal: ctx.signal});
      const active = profiles.find(p => p.active);
      const before = active ? await searchAll(qs, active.name, {signal: ctx.signal}) : qs.map(() => []);
      const put = await api('PUT', '/admin/profiles/' + seg(target), body);
      const r = await post(`/admin/profiles/${seg(target)}/reweight`);
      status.replaceChildren(notice(`${put.profile.name} ${put.created ? 'created' : 'saved'}; re-weight queued: job ${r.job_id}.`, 'ok'));
      await onStarted({name: target, setID: r.set_id, queries: qs, before, baseline: active ? active.name : ''});
    } catch (err) {
      if (err.name !== 'AbortError') {
        status.replaceChildren(errorBox(err));
      }
    }
  });
  const edit = p => {
    name.value = p.name;
    strategy.value = p.strategy;
    for (const [k, input] of Object.entries(inputs)) {
      input.value = p.weights[k] ? String(p.weights[k]) : '';
    }
    lexical.value = p.fusion ? String(p.fusion.weight_lexical) : '';
    vector.value = p.fusion ? String(p.fusion.weight_vector) : '';
    showWeights();
    name.focus();
  };
  return {node: f, edit};
}

// diffView shows, for each query, the top results of the active profile before the change
// and of the saved profile side by side, with the tools that moved, entered or left the top
// marked.
function diffView(req, results) {
  const head = `${req.baseline || 'no active profile'} (active, before)`;
  return [
    h('h3', {}, `Top ${TOP}: ${req.baseline} against ${req.name}`),
    req.queries.length === 0 ? h('p', {class: 'muted'}, 'No query to compare: name some in the form.') : null,
    req.queries.map((q, i) => {
      const was = req.before[i];
      const now = results[i];
      // the active profile's column marks the tools that left the top; the saved
      // profile's marks the tools that entered it or moved, by how many places.
      const before = r => {
        const tool = was[r];
        if (!tool) {
          return '';
        }
        return now.includes(tool) ? h('span', {class: 'tool'}, tool) :
          h('span', {class: 'tool dropped', title: `not in ${req.name}'s top ${TOP}`}, tool, ' ', h('span', {class: 'move'}, 'out'));
      };
      const after = r => {
        const tool = now[r];
        if (!tool) {
          return '';
        }
        const j = was.indexOf(tool);
        if (j === r) {
          return h('span', {class: 'tool'}, tool);
        }
        const move = j < 0 ? 'new' : j > r ? `↑${j - r}` : `↓${r - j}`;
        return h('span', {class: 'tool moved', title: j < 0 ? `not in the top ${TOP} before` : `#${j + 1} before`}, tool, ' ', h('span', {class: 'move'}, move));
      };
      const rows = Array.from({length: Math.max(was.length, now.length)}, (_, r) => r);
      return h('div', {class: 'diff'}, h('p', {class: 'diff-query'}, h('strong', {}, q)),
        table([
          {title: '#', class: 'num', cell: r => String(r + 1)},
          {title: head, cell: before},
          {title: req.name, cell: after},
        ], rows, {empty: 'Neither profile found anything.', cls: 'diff-table'}));
    }),
  ];
}

function setLine(set) {
  if (!set) {
    return h('span', {class: 'muted'}, 'none');
  }
  return h('span', {}, badge(set.state, set.state === 'ready' ? 'ok' : set.state === 'failed' ? 'bad' : 'warn'), ' ',
    `${fmtInt(set.vectors)} vectors`);
}

function profileTable(profiles, status, reload, edit) {
  const kinds = [...new Set(profiles.flatMap(p => Object.keys(p.weights)))]
    .sort((a, b) => (kindOrder.indexOf(a) + 1 || 99) - (kindOrder.indexOf(b) + 1 || 99) || a.localeCompare(b));
  const maxW = Math.max(...profiles.flatMap(p => Object.values(p.weights)), 0);
  const run = async (call, done) => {
    try {
      status.replaceChildren(notice(done(await call()), 'ok'));
      reload();
    } catch (err) {
      status.replaceChildren(errorBox(err));
    }
  };
  const reweight = p => button('Re-weight', () => run(() => post(`/admin/profiles/${seg(p.name)}/reweight`),
    r => `Re-weight of ${p.name} ${r.duplicate ? 'already queued' : 'queued'}: job ${r.job_id}, vector set ${r.set_id}.`),
  {class: 'reweight', 'data-profile': p.name});
  const activate = p => p.active || !p.current_set || p.current_set.state !== 'ready' ?
    button('Activate', () => {}, {class: 'activate', 'data-profile': p.name, disabled: true}) :
    confirmButton('Activate', `Make ${p.name} the profile every search uses?`,
      () => run(() => post(`/admin/profiles/${seg(p.name)}/activate`), r => `${r.name} is the active profile.`),
      {class: 'activate', 'data-profile': p.name});
  const remove = p => p.active ? null : confirmButton('Delete', `Delete ${p.name} and its vectors?`,
    () => run(() => api('DELETE', '/admin/profiles/' + seg(p.name)), () => `${p.name} deleted.`),
    {class: 'delete', 'data-profile': p.name});
  const row = (title, cell) => h('tr', {}, h('th', {scope: 'row'}, title), profiles.map(p => h('td', {}, cell(p))));
  return h('div', {class: 'table-wrap'}, h('table', {class: 'side-by-side'},
    h('thead', {}, h('tr', {}, h('th', {}, 'Kind'), profiles.map(p => h('th', {},
      p.name, ' ', p.active ? badge('active', 'ok') : null)))),
    h('tbody', {},
      row('Strategy', p => p.strategy),
      kinds.map(k => row(k, p => p.strategy !== 'tdwa' ? h('span', {class: 'muted'}, '–') :
        h('span', {class: 'weight'}, bar(p.weights[k] ?? 0, maxW, `${p.name} ${k}: ${p.weights[k] ?? 0}`), ' ', fmtNum(p.weights[k] ?? 0, 2)))),
      row('Fusion', p => p.fusion ? `lexical ${fmtNum(p.fusion.weight_lexical, 2)} · vector ${fmtNum(p.fusion.weight_vector, 2)}` : h('span', {class: 'muted'}, 'service')),
      row('Vectors', p => setLine(p.current_set)),
      row('Re-weight', p => p.building ? h('span', {class: 'building', 'data-profile': p.name}, progress(p.building.done, p.building.total)) : h('span', {class: 'muted'}, 'idle')),
      profiles.some(p => p.tune) ? row('Tuned', p => p.tune ? gainText(p.tune.gain) : '') : null,
      row('Updated', p => fmtTime(p.updated_at)),
      row('', p => h('span', {class: 'actions'}, reweight(p), ' ',
        button('Edit', () => edit(p), {class: 'edit', 'data-profile': p.name}))),
      row('', p => h('span', {class: 'actions'}, activate(p), ' ', remove(p))))));
}

function gainText(g) {
  if (!g || g.mean === undefined) {
    return '';
  }
  return `${g.metric} ${g.mean >= 0 ? '+' : ''}${fmtNum(g.mean, 3)} [${fmtNum(g.ci95[0], 3)}, ${fmtNum(g.ci95[1], 3)}] ${g.verdict}`;
}

function tuneTable(tunes) {
  const withGain = tunes.filter(t => t.result && t.result.gain);
  return [
    table([
      {title: '#', class: 'num', cell: t => String(t.id)},
      {title: 'Profile', cell: t => t.profile},
      {title: 'Baseline', cell: t => t.baseline},
      {title: 'State', cell: t => badge(t.state, t.state === 'succeeded' ? 'ok' : t.state === 'failed' ? 'bad' : 'warn')},
      {title: 'Progress', cell: t => t.state === 'running' ? progress(t.done, t.total) : (t.phase || '')},
      {title: 'Held-out gain', cell: t => t.result ? gainText(t.result.gain) : (t.error ? h('span', {class: 'err-text'}, t.error) : '')},
      {title: 'Labels', cell: t => t.result ? `${fmtInt(t.result.labels.searches)} searches · ${fmtInt(t.result.labels.keys)} keys` : ''},
      {title: 'Started', cell: t => fmtTime(t.created_at)},
    ], tunes, {empty: 'No tune yet (toolgate profiles tune NEW, or POST /admin/profiles/tune).'}),
    withGain.length ? [h('h3', {}, 'Held-out gain with its 95% interval'),
      intervalChart(withGain.map(t => ({label: `#${t.id} ${t.profile}`, value: t.result.gain.mean, lo: t.result.gain.ci95[0], hi: t.result.gain.ci95[1]})),
        {zero: true, format: v => fmtNum(v, 3), label: 'tune gains', width: 1200})] : null,
  ];
}
