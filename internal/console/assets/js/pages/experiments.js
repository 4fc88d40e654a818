// Experiments: /ui/experiments (the list, the form that starts one, and the running one's
// arms) and /ui/experiments/<name> (one experiment's arms).

import {get, post, seg} from '../api.js';
import {h, fill, table, section, badge, button, confirmButton, errorBox, notice, fmtTime, fmtInt, fmtNum, fmtPct} from '../dom.js';
import {intervalChart} from '../chart.js';

export async function render(root, ctx) {
  const [name] = ctx.groups;
  const opts = {signal: ctx.signal};
  const status = h('div', {class: 'status', id: 'status'});
  if (name) {
    ctx.setTitle(`Experiment ${name}`);
    const report = h('div', {id: 'experiment'});
    root.append(h('p', {class: 'crumbs'}, h('a', {href: '/ui/experiments'}, 'Experiments'), ' / ', name), h('h1', {}, name), status, report);
    await fill(report, () => Promise.all([get('/admin/experiments/' + seg(name), opts), get('/admin/profiles', opts)]),
      ([r, d]) => reportView(r, status, ctx, (d.profiles.find(p => p.active) || {}).name));
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

function reportView(r, status, ctx, active) {
  const v = verdict(r);
  return [
    h('p', {class: 'states'}, r.running ? badge('running', 'ok') : badge('stopped'), ' ',
      `${r.candidate} (candidate, ${fmtPct(r.share, 0)} of the ${r.unit}s) against ${r.control} (control) · started ${fmtTime(r.started_at)}` +
      (r.stopped_at ? ` · stopped ${fmtTime(r.stopped_at)}` : ''), ' ', r.running ? stopButton(r, status, ctx) : null),
    h('div', {class: 'verdict ' + v.kind, id: 'verdict'}, h('p', {class: 'verdict-text'}, v.text),
      h('p', {class: 'muted', id: 'sample-size'}, sampleSize(r)),
      v.kind === 'better' && active !== r.candidate ? activateWinner(r, status) : null,
      v.kind === 'better' && active === r.candidate ? h('p', {class: 'muted'}, `${r.candidate} is the active profile.`) : null),
    arms(r),
  ];
}

// verdict reads the difference candidate − control of the summary metric, the MRR over all
// searches: better or worse when its 95% interval excludes 0, otherwise no difference yet.
function verdict(r) {
  const d = r.difference ? r.difference.mrr_all : null;
  if (!d || d.value === null || d.value === undefined || !d.ci95) {
    return {kind: 'none', text: 'No verdict yet: the arms do not have the two clusters each that an interval needs.'};
  }
  const diff = `${d.value >= 0 ? '+' : ''}${fmtNum(d.value, 3)} [${fmtNum(d.ci95[0], 3)}, ${fmtNum(d.ci95[1], 3)}]`;
  if (d.ci95[0] > 0) {
    return {kind: 'better', text: `Candidate better: ${r.candidate}'s MRR over all searches is ${diff} against ${r.control}'s, an interval above 0.`};
  }
  if (d.ci95[1] < 0) {
    return {kind: 'worse', text: `Candidate worse: ${r.candidate}'s MRR over all searches is ${diff} against ${r.control}'s, an interval below 0.`};
  }
  return {kind: 'none', text: `No difference yet: ${r.candidate}'s MRR over all searches is ${diff} against ${r.control}'s, an interval that holds 0.`};
}

// Z is z(0.975) + z(0.8): a difference this many standard errors from 0 is found at the 5%
// level four times in five (docs/console.md, "Profiles and experiments").
const Z = 1.96 + 0.8416;

// sampleSize compares the searches counted so far with about how many it takes to tell a
// difference of the observed size from none: the standard error shrinks as 1/√n, so n
// searches become n·(Z·se/|d|)².
function sampleSize(r) {
  const list = r.arms || [];
  const counted = list.reduce((n, a) => n + (a.counted || 0), 0);
  const labelled = list.reduce((n, a) => n + (a.labelled || 0), 0);
  const so = `${fmtInt(counted)} counted searches so far (${fmtInt(labelled)} labelled).`;
  const d = r.difference ? r.difference.mrr_all : null;
  if (!d || d.se === null || d.se === undefined || d.value === null || d.value === undefined) {
    return so + ' Too few to estimate how many a verdict needs.';
  }
  if (d.value === 0) {
    return so + ' The arms differ by nothing so far: no number of searches tells a difference of that size.';
  }
  const factor = (Z * d.se / Math.abs(d.value)) ** 2;
  const need = Math.ceil(counted * factor);
  if (need <= counted) {
    return so + ` A difference of the observed size (${fmtNum(Math.abs(d.value), 3)}) needs about ${fmtInt(need)} counted searches: these are enough.`;
  }
  return so + ` To tell a difference of the observed size (${fmtNum(Math.abs(d.value), 3)}) from none at the 5% level, four times in five, ` +
    `takes about ${fmtInt(need)} (about ${fmtInt(Math.ceil(labelled * factor))} labelled at the current label rate).`;
}

function activateWinner(r, status) {
  const box = h('p', {id: 'activate-winner'});
  box.append(confirmButton(`Activate ${r.candidate}`,
    `Make ${r.candidate} the profile every search uses${r.running ? ' (the experiment keeps running until stopped)' : ''}?`, async () => {
      try {
        const p = await post(`/admin/profiles/${seg(r.candidate)}/activate`);
        status.replaceChildren(notice(`${p.name} is the active profile.`, 'ok'));
        box.replaceChildren(h('span', {class: 'muted'}, `${p.name} is the active profile.`));
      } catch (err) {
        status.replaceChildren(errorBox(err));
      }
    }, {class: 'activate-winner', 'data-profile': r.candidate}));
  return box;
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
