// Experiments: /ui/experiments (the list, the form that starts one, and the running one's
// arms) and /ui/experiments/<name> (one experiment's arms).

import {get, post, seg} from '../api.js';
import {h, fill, table, section, badge, button, errorBox, fmtTime, fmtInt, fmtNum, fmtPct} from '../dom.js';
import {intervalChart} from '../chart.js';

export async function render(root, ctx) {
  const [name] = ctx.groups;
  const opts = {signal: ctx.signal};
  const status = h('div', {class: 'status', id: 'status'});
  if (name) {
    ctx.setTitle(`Experiment ${name}`);
    const report = h('div', {id: 'experiment'});
    root.append(h('p', {class: 'crumbs'}, h('a', {href: '/ui/experiments'}, 'Experiments'), ' / ', name), h('h1', {}, name), status, report);
    await fill(report, () => get('/admin/experiments/' + seg(name), opts), r => reportView(r, status, ctx));
    return;
  }
  ctx.setTitle('Experiments');
  const list = h('div', {id: 'experiments'});
  const running = h('div', {id: 'running'});
  const start = h('div', {id: 'start'});
  root.append(h('h1', {}, 'A/B experiments'), status, section('Experiments', list), running, section('Start an experiment', start));
  await Promise.all([
    fill(list, () => get('/admin/experiments', opts), d => {
      const live = d.experiments.find(e => e.running);
      if (live) {
        running.replaceChildren(section(`Running: ${live.name}`, h('div', {id: 'running-report'})));
        fill(running.querySelector('#running-report'), () => get('/admin/experiments/' + seg(live.name), opts), r => arms(r));
      }
      return listTable(d.experiments, status, ctx);
    }),
    fill(start, () => get('/admin/profiles', opts), d => startForm(d.profiles, status, ctx)),
  ]);
}

function stopButton(e, status, ctx) {
  return button('Stop', async () => {
    try {
      await post('/admin/experiments/' + seg(e.name) + '/stop');
      ctx.refresh();
    } catch (err) {
      status.replaceChildren(errorBox(err));
    }
  }, {class: 'stop', 'data-experiment': e.name});
}

function listTable(list, status, ctx) {
  return table([
    {title: 'Name', cell: e => h('a', {href: '/ui/experiments/' + seg(e.name)}, e.name)},
    {title: 'Control', cell: e => e.control},
    {title: 'Candidate', cell: e => e.candidate},
    {title: 'Share', class: 'num', cell: e => fmtPct(e.share, 0)},
    {title: 'Unit', cell: e => e.unit},
    {title: 'State', cell: e => e.running ? badge('running', 'ok') : badge('stopped')},
    {title: 'Started', cell: e => fmtTime(e.started_at)},
    {title: 'Stopped', cell: e => fmtTime(e.stopped_at)},
    {title: '', cell: e => e.running ? stopButton(e, status, ctx) : ''},
  ], list, {empty: 'No experiment yet.'});
}

function startForm(profiles, status, ctx) {
  const opt = (v, label) => h('option', {value: v}, label);
  const name = h('input', {id: 'exp-name', name: 'name', required: true, placeholder: 'e.g. var1-vs-default'});
  const candidate = h('select', {id: 'exp-candidate', name: 'candidate', required: true},
    profiles.filter(p => !p.active).map(p => opt(p.name, p.name + (p.current_set ? '' : ' (no vectors)'))));
  const control = h('select', {id: 'exp-control', name: 'control'}, opt('', 'the active profile'), profiles.map(p => opt(p.name, p.name)));
  const share = h('input', {id: 'exp-share', name: 'share', type: 'number', min: 0.01, max: 0.99, step: 0.01, value: '0.1'});
  const unit = h('select', {id: 'exp-unit', name: 'unit'}, opt('session', 'session'), opt('key', 'key'));
  const f = h('form', {class: 'grid-form', id: 'exp-form'},
    h('label', {}, h('span', {}, 'Name'), name),
    h('label', {}, h('span', {}, 'Candidate'), candidate),
    h('label', {}, h('span', {}, 'Control'), control),
    h('label', {}, h('span', {}, 'Candidate share'), share),
    h('label', {}, h('span', {}, 'Unit'), unit),
    h('div', {}, h('button', {type: 'submit', id: 'exp-start'}, 'Start')));
  f.addEventListener('submit', async e => {
    e.preventDefault();
    const body = {name: name.value.trim(), candidate: candidate.value, share: parseFloat(share.value), unit: unit.value};
    if (control.value) {
      body.control = control.value;
    }
    try {
      const started = await post('/admin/experiments', body);
      ctx.navigate('/ui/experiments/' + seg(started.name));
    } catch (err) {
      status.replaceChildren(errorBox(err));
    }
  });
  return [h('p', {class: 'muted'}, 'Searches are routed to the candidate by session (MCP session or session_id) or by key; one experiment runs at a time.'), f];
}

function reportView(r, status, ctx) {
  return [
    h('p', {class: 'states'}, r.running ? badge('running', 'ok') : badge('stopped'), ' ',
      `${r.candidate} (candidate, ${fmtPct(r.share, 0)} of the ${r.unit}s) against ${r.control} (control) · started ${fmtTime(r.started_at)}` +
      (r.stopped_at ? ` · stopped ${fmtTime(r.stopped_at)}` : ''), ' ', r.running ? stopButton(r, status, ctx) : null),
    arms(r),
  ];
}

const metrics = [
  ['label_rate', 'Label rate', v => fmtPct(v, 1)],
  ['mrr_all', 'MRR (all searches)', v => fmtNum(v, 3)],
  ['mrr_labelled', 'MRR (labelled searches)', v => fmtNum(v, 3)],
  ['mean_rank', 'Mean rank of the label', v => fmtNum(v, 2)],
];

function estimate(e, format) {
  if (!e || e.value === null || e.value === undefined) {
    return h('span', {class: 'muted'}, '–');
  }
  return e.ci95 ? `${format(e.value)} [${format(e.ci95[0])}, ${format(e.ci95[1])}]` : format(e.value);
}

// arms shows each arm's searches and metrics with their 95% intervals, as a table and as
// plots (the arms, then candidate − control).
function arms(r) {
  const list = r.arms || [];
  const nodes = [table([
    {title: 'Arm', cell: a => a.arm},
    {title: 'Profile', cell: a => a.profile},
    {title: 'Units', class: 'num', cell: a => fmtInt(a.units)},
    {title: 'Keys', class: 'num', cell: a => fmtInt(a.keys)},
    {title: 'Clusters', class: 'num', cell: a => fmtInt(a.clusters)},
    {title: 'Searches', class: 'num', cell: a => fmtInt(a.searches)},
    {title: 'Counted', class: 'num', cell: a => fmtInt(a.counted)},
    {title: 'Labelled', class: 'num', cell: a => fmtInt(a.labelled)},
    {title: 'Top key', cell: a => a.top_key ? `${a.top_key.name} (${fmtPct(a.top_key.share, 0)})` : '–'},
    {title: 'Top unit', cell: a => a.top_unit ? `${a.top_unit.unit} (${fmtPct(a.top_unit.share, 0)})` : '–'},
    ...metrics.map(([k, title, f]) => ({title, cell: a => estimate(a[k], f)})),
  ], list, {empty: 'No search has been served by this experiment yet.', cls: 'arms'})];
  if ((r.warnings || []).length > 0) {
    nodes.unshift(h('ul', {class: 'warnings', id: 'experiment-warnings'}, r.warnings.map(w => h('li', {}, w))));
  }
  if (list.length === 0) {
    return nodes;
  }
  const plots = h('div', {class: 'two'});
  for (const [k, title, f] of metrics) {
    const rows = list.map(a => ({label: `${a.arm} (${a.profile})`, value: a[k] ? a[k].value : null,
      lo: a[k] && a[k].ci95 ? a[k].ci95[0] : null, hi: a[k] && a[k].ci95 ? a[k].ci95[1] : null}));
    const d = r.difference ? r.difference[k] : null;
    rows.push({label: 'candidate − control', value: d ? d.value : null, lo: d && d.ci95 ? d.ci95[0] : null, hi: d && d.ci95 ? d.ci95[1] : null});
    plots.append(h('div', {}, h('h3', {}, title), intervalChart(rows, {format: v => f(v), zero: true, label: title, width: 580})));
  }
  nodes.push(plots);
  return nodes;
}
