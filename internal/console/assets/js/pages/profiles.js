// Profiles: /ui/profiles. Every weight profile's weights side by side, with its vector
// sets and the buttons to rebuild its vectors or make it the active profile; and the tunes
// (weights fitted to labelled searches) with their held-out evidence.

import {get, post, seg} from '../api.js';
import {h, fill, table, section, badge, button, errorBox, notice, progress, fmtTime, fmtNum, fmtInt} from '../dom.js';
import {bar, intervalChart} from '../chart.js';

// kinds in the order docs/profiles.md lists them; kinds only a profile knows follow.
const kindOrder = ['name', 'description', 'parameters', 'question', 'topics', 'profile_function', 'profile_tags',
  'profile_when_to_use', 'profile_limitation', 'profile_example_usage', 'observed'];

export async function render(root, ctx) {
  ctx.setTitle('Profiles');
  const status = h('div', {class: 'status', id: 'status'});
  const weights = h('div', {id: 'profiles'});
  const tunes = h('div', {id: 'tunes'});
  root.append(h('h1', {}, 'Weight profiles'), status, section('Weights', weights), section('Tunes', tunes),
    h('p', {class: 'muted'}, 'A/B experiments between profiles: ', h('a', {href: '/ui/experiments'}, 'Experiments'), '.'));
  const opts = {signal: ctx.signal};
  const reload = () => fill(weights, () => get('/admin/profiles', opts), d => profileTable(d.profiles, status, reload));
  await Promise.all([
    reload(),
    fill(tunes, () => get('/admin/tunes', opts), d => tuneTable(d.tunes)),
  ]);
}

function setLine(set) {
  if (!set) {
    return h('span', {class: 'muted'}, 'none');
  }
  return h('span', {}, badge(set.state, set.state === 'ready' ? 'ok' : set.state === 'failed' ? 'bad' : 'warn'), ' ',
    `${fmtInt(set.vectors)} vectors`);
}

function profileTable(profiles, status, reload) {
  const kinds = [...new Set(profiles.flatMap(p => Object.keys(p.weights)))]
    .sort((a, b) => (kindOrder.indexOf(a) + 1 || 99) - (kindOrder.indexOf(b) + 1 || 99) || a.localeCompare(b));
  const maxW = Math.max(...profiles.flatMap(p => Object.values(p.weights)), 0);
  const act = (p, action) => button(action === 'activate' ? 'Activate' : 'Re-weight', async () => {
    try {
      const r = await post(`/admin/profiles/${seg(p.name)}/${action}`);
      status.replaceChildren(notice(action === 'activate' ? `${r.name} is the active profile.` :
        `Re-weight of ${p.name} ${r.duplicate ? 'already queued' : 'queued'}: job ${r.job_id}, vector set ${r.set_id}.`, 'ok'));
      reload();
    } catch (err) {
      status.replaceChildren(errorBox(err));
    }
  }, {class: action, 'data-profile': p.name, disabled: action === 'activate' && (p.active || !p.current_set || p.current_set.state !== 'ready')});
  const row = (title, cell) => h('tr', {}, h('th', {scope: 'row'}, title), profiles.map(p => h('td', {}, cell(p))));
  return h('div', {class: 'table-wrap'}, h('table', {class: 'side-by-side'},
    h('thead', {}, h('tr', {}, h('th', {}, 'Kind'), profiles.map(p => h('th', {},
      p.name, ' ', p.active ? badge('active', 'ok') : null)))),
    h('tbody', {},
      row('Strategy', p => p.strategy),
      kinds.map(k => row(k, p => p.strategy !== 'tdwa' ? h('span', {class: 'muted'}, '–') :
        h('span', {class: 'weight'}, bar(p.weights[k] ?? 0, maxW, `${p.name} ${k}: ${p.weights[k] ?? 0}`), ' ', fmtNum(p.weights[k] ?? 0, 2)))),
      row('Vectors', p => setLine(p.current_set)),
      row('Re-weight', p => p.building ? progress(p.building.done, p.building.total) : h('span', {class: 'muted'}, 'idle')),
      profiles.some(p => p.tune) ? row('Tuned', p => p.tune ? gainText(p.tune.gain) : '') : null,
      row('Updated', p => fmtTime(p.updated_at)),
      row('', p => h('span', {class: 'actions'}, act(p, 'reweight'), ' ', act(p, 'activate'))))));
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
