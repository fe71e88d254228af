/**
 * The daemon's status page (`GET /` on its listener): one self-contained HTML document, with its
 * style and script inline and nothing fetched from elsewhere. The page holds no data of its own:
 * its script reads `/status`, `/status/resources` and `/events` (same origin) and draws them,
 * again every few seconds, so it can show nothing that those do not, and no secret (they hold
 * none). It lists at most `PAGE_RESOURCES` resources: all of them when there are no more, else
 * those not in sync (the counts by state say how many of each there are).
 *
 * Everything the page shows is inserted as text nodes (`textContent`, `createElement`), never as
 * markup: a resource name, a reason or an error message cannot become HTML. The document is a
 * constant, so the Content-Security-Policy pins its one script and one style by hash and allows
 * nothing else: no other script, no inline handler, no frame, no form, no image, and requests to
 * the page's own origin only.
 *
 * The DNS section is drawn only when `/status` carries `domains: [{ domain, dns_records: [...] }]`
 * (each record shown with whatever fields it has); today's `/status` has no domains, so the
 * section stays hidden until the daemon reports them.
 */
import { createHash } from 'node:crypto';

/** How often the page reads `/status` and `/events` again. */
export const PAGE_REFRESH_MS = 5_000;

/** The most resources the page lists (one `/status/resources` request). */
export const PAGE_RESOURCES = 200;

const STYLE = `
:root { color-scheme: light dark; --fg: #1f2328; --muted: #59636e; --bg: #ffffff; --card: #f6f8fa;
  --line: #d1d9e0; --ok: #1a7f37; --warn: #9a6700; --bad: #cf222e; --info: #0969da; --off: #6e7781; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --muted: #9198a1; --bg: #0d1117;
  --card: #151b23; --line: #3d444d; --ok: #3fb950; --warn: #d29922; --bad: #f85149;
  --info: #4493f8; --off: #9198a1; } }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif;
  color: var(--fg); background: var(--bg); }
header { padding: 16px 24px; border-bottom: 1px solid var(--line); display: flex;
  flex-wrap: wrap; gap: 8px 24px; align-items: baseline; }
h1 { font-size: 18px; margin: 0; }
h2 { font-size: 15px; margin: 24px 0 8px; }
main { padding: 0 24px 24px; max-width: 1200px; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  font-size: 12.5px; }
.muted { color: var(--muted); }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin-top: 16px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 6px;
  padding: 10px 14px; min-width: 150px; }
.card .label { color: var(--muted); font-size: 12px; }
.card .value { font-size: 16px; font-weight: 600; overflow-wrap: anywhere; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line);
  vertical-align: top; }
td:first-child { white-space: nowrap; }
th { font-size: 12px; color: var(--muted); font-weight: 600; }
.pill { display: inline-block; padding: 0 8px; border-radius: 10px; font-size: 12px;
  font-weight: 600; border: 1px solid currentColor; white-space: nowrap; }
.s-in_sync { color: var(--ok); } .s-drifted { color: var(--warn); }
.s-waiting { color: var(--info); } .s-error { color: var(--bad); }
.s-suspended { color: var(--off); }
.drift { margin: 4px 0 0; padding: 0; list-style: none; }
.drift .sym { color: var(--warn); }
.diag { margin: 0; padding: 0; list-style: none; }
.diag li { padding: 4px 0; }
.sev-error { color: var(--bad); font-weight: 600; } .sev-warning { color: var(--warn);
  font-weight: 600; }
#notice { margin-top: 12px; color: var(--bad); }
.empty { color: var(--muted); font-style: italic; }
`;

const SCRIPT = `
'use strict';
(function () {
  var REFRESH_MS = ${PAGE_REFRESH_MS};
  var LISTED = ${PAGE_RESOURCES};
  var NOT_IN_SYNC = 'out_of_sync,conflict,blocked,suspended,excluded,error';
  var loads = 0;
  var STATES = {
    in_sync: 'in sync', out_of_sync: 'drifted', blocked: 'waiting', conflict: 'waiting',
    suspended: 'suspended', error: 'error'
  };
  var CLASSES = {
    in_sync: 'in_sync', out_of_sync: 'drifted', blocked: 'waiting', conflict: 'waiting',
    suspended: 'suspended', error: 'error'
  };
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function clear(id) {
    var e = document.getElementById(id);
    while (e.firstChild) e.removeChild(e.firstChild);
    return e;
  }
  function card(parent, label, value) {
    var c = el('div', 'card');
    c.appendChild(el('div', 'label', label));
    c.appendChild(el('div', 'value', value === null || value === undefined ? '-' : value));
    parent.appendChild(c);
  }
  function when(iso) {
    if (!iso) return '-';
    var d = new Date(iso);
    return isNaN(d.getTime()) ? String(iso) : d.toLocaleString();
  }
  function empty(parent, text) { parent.appendChild(el('p', 'empty', text)); }
  function row(cells) {
    var tr = el('tr');
    cells.forEach(function (c) {
      var td = el('td');
      if (c instanceof Node) td.appendChild(c); else td.textContent = c === null || c === undefined ? '' : String(c);
      tr.appendChild(td);
    });
    return tr;
  }
  function table(parent, heads, rows) {
    var t = el('table'), thead = el('thead'), htr = el('tr'), tbody = el('tbody');
    heads.forEach(function (h) { htr.appendChild(el('th', null, h)); });
    thead.appendChild(htr); t.appendChild(thead);
    rows.forEach(function (r) { tbody.appendChild(r); });
    t.appendChild(tbody); parent.appendChild(t);
  }

  function drawSummary(s) {
    document.getElementById('dir').textContent = s.dir;
    var badge = document.getElementById('mode');
    badge.textContent = s.suspended ? 'suspended' : s.mode === 'observe' ? 'observing' : 'enforcing';
    badge.className = 'pill ' + (s.suspended ? 's-suspended' : s.mode === 'observe' ? 's-waiting' : 's-in_sync');
    var cards = clear('cards');
    var last = s.last_reconcile;
    card(cards, 'ready', s.ready ? 'yes' : 'not yet');
    card(cards, 'last cycle', last ? last.result + (s.in_flight ? ' (a cycle is running)' : '') : (s.in_flight ? 'running' : 'none yet'));
    card(cards, 'writes', last ? last.writes : null);
    card(cards, 'out of sync', last && last.out_of_sync !== null ? last.out_of_sync : null);
    card(cards, 'at', last ? when(last.at) : null);
    card(cards, 'took', last ? last.duration_ms + ' ms' : null);
    card(cards, 'trigger', last ? last.reason : null);
    card(cards, 'revision', s.revision ? String(s.revision).slice(0, 12) : null);
    card(cards, 'next resync', when(s.next_resync_at));
    if (last && last.summary) {
      var sm = last.summary;
      card(cards, 'plan', sm.create + ' create, ' + sm.update + ' update, ' + sm.delete + ' delete, ' + sm.adopt + ' adopt, ' + sm.noop + ' in sync');
    }
    if (s.leader_election) card(cards, 'leader election', s.leader_election.role + ' (holder ' + (s.leader_election.holder || '-') + ')');
  }

  // The resources to list: all of them when they fit, else those not in sync.
  function resourcesPath(s) {
    var total = s.resource_counts ? s.resource_counts.total : 0;
    return 'status/resources?limit=' + LISTED + (total > LISTED ? '&state=' + NOT_IN_SYNC : '');
  }

  function drawResources(s, page) {
    var box = clear('resources');
    var counted = s.resource_counts || { total: 0, by_state: {} };
    var list = page.resources || [];
    if (counted.total === 0) { empty(box, 'No managed resource yet: no cycle has planned.'); return; }
    var counts = {};
    Object.keys(counted.by_state).forEach(function (st) { var k = STATES[st] || st; counts[k] = (counts[k] || 0) + counted.by_state[st]; });
    box.appendChild(el('p', 'muted', Object.keys(counts).map(function (k) { return counts[k] + ' ' + k; }).join(', ')));
    if (list.length < counted.total) {
      var which = counted.total > LISTED ? ', those not in sync' + (page.total > list.length ? ' (the first of ' + page.total + ')' : '') : '';
      box.appendChild(el('p', 'muted', 'Listed: ' + list.length + ' of ' + counted.total + which + '. /status/resources lists every one, a page at a time.'));
    }
    if (list.length === 0) return;
    table(box, ['resource', 'state', 'id', 'why'], list.map(function (r) {
      var pill = el('span', 'pill s-' + (CLASSES[r.state] || 'error'), STATES[r.state] || r.state);
      var why = el('div');
      if (r.reason) why.appendChild(el('div', null, r.reason));
      if (r.fields && r.fields.length) {
        var ul = el('ul', 'drift mono');
        r.fields.forEach(function (f) {
          var li = el('li');
          li.appendChild(el('span', 'sym', '~ '));
          li.appendChild(document.createTextNode(f));
          li.appendChild(el('span', 'muted', ' (value not shown)'));
          ul.appendChild(li);
        });
        why.appendChild(ul);
      }
      return row([el('code', null, r.address), pill, r.id ? el('code', null, r.id) : '', why]);
    }));
  }

  function drawErrors(s) {
    var box = clear('errors');
    var any = false;
    if (s.last_error) {
      any = true;
      var p = el('p');
      p.appendChild(el('span', 'sev-error', 'last error '));
      p.appendChild(el('span', 'muted', '(' + when(s.last_error.at) + ') '));
      p.appendChild(el('span', null, s.last_error.message));
      box.appendChild(p);
    }
    var files = Object.keys(s.diagnostics_by_file || {}).sort();
    if (files.length) {
      any = true;
      var ul = el('ul', 'diag');
      files.forEach(function (file) {
        s.diagnostics_by_file[file].forEach(function (d) {
          var li = el('li');
          li.appendChild(el('code', null, file + ':' + d.line + ':' + d.column));
          li.appendChild(document.createTextNode(' '));
          li.appendChild(el('span', 'sev-' + d.severity, d.severity));
          li.appendChild(document.createTextNode(' '));
          if (d.path) { li.appendChild(el('code', 'muted', d.path)); li.appendChild(document.createTextNode(': ')); }
          li.appendChild(el('span', null, d.message));
          ul.appendChild(li);
        });
      });
      box.appendChild(ul);
    }
    (s.warnings || []).forEach(function (w) {
      any = true;
      var p = el('p');
      p.appendChild(el('span', 'sev-warning', 'warning '));
      p.appendChild(el('span', null, w));
      box.appendChild(p);
    });
    if (!any) empty(box, 'No error.');
  }

  // Domains and the DNS records they still need, when the status lists any: each domain's name,
  // then its records as the status gives them (whatever fields a record has).
  function drawDomains(s) {
    var section = document.getElementById('dns-section');
    var domains = Array.isArray(s.domains) ? s.domains : [];
    var rows = [];
    domains.forEach(function (d) {
      var records = Array.isArray(d.dns_records) ? d.dns_records : [];
      records.forEach(function (r) {
        var text = Object.keys(r).map(function (k) { return k + ' ' + r[k]; }).join('  ');
        rows.push(row([el('code', null, d.domain || d.name || ''), el('code', null, text)]));
      });
    });
    section.hidden = rows.length === 0;
    var box = clear('dns');
    if (rows.length) table(box, ['domain', 'record still needed'], rows);
  }

  function drawEvents(events) {
    var box = clear('events');
    var list = (events || []).slice(-30).reverse();
    if (list.length === 0) { empty(box, 'No event yet.'); return; }
    table(box, ['time', 'type', 'resource', 'message'], list.map(function (e) {
      return row([when(e.time), el('span', 'pill s-' + (e.type === 'recovered' || e.type === 'changed' || e.type === 'resumed' ? 'in_sync' : e.type === 'drift' ? 'drifted' : e.type === 'suspended' ? 'suspended' : e.type === 'blocked' || e.type === 'waiting' ? 'waiting' : e.type === 'readiness' ? (e.readiness && e.readiness.state === 'ready' ? 'in_sync' : e.readiness && e.readiness.state === 'error' ? 'error' : 'waiting') : 'error'), e.type), e.resource ? el('code', null, e.resource) : '', e.message]);
    }));
  }

  function getJson(path) {
    return fetch(path, { cache: 'no-store', headers: { accept: 'application/json' } }).then(function (r) {
      if (!r.ok) throw new Error(path + ' answered ' + r.status);
      return r.json();
    });
  }

  function refresh() {
    Promise.all([getJson('status'), getJson('events')]).then(function (both) {
      return getJson(resourcesPath(both[0])).then(function (page) { return [both[0], both[1], page]; });
    }).then(function (all) {
      var s = all[0];
      drawSummary(s); drawResources(s, all[2]); drawErrors(s); drawDomains(s); drawEvents(all[1].events);
      document.getElementById('notice').textContent = '';
      document.getElementById('updated').textContent = 'updated ' + new Date().toLocaleTimeString();
      loads += 1; document.body.setAttribute('data-loads', String(loads));
    }).catch(function (err) {
      document.getElementById('notice').textContent = 'Cannot read the status: ' + (err && err.message ? err.message : err) + '. Retrying.';
    }).then(function () { setTimeout(refresh, REFRESH_MS); });
  }
  refresh();
})();
`;

const BODY = `<header>
<h1>edgesync</h1>
<span class="mono" id="dir"></span>
<span class="pill" id="mode"></span>
<span class="muted" id="updated">loading...</span>
</header>
<main>
<div id="notice" role="alert"></div>
<div class="cards" id="cards"></div>
<h2>Resources</h2>
<div id="resources"></div>
<h2>Errors</h2>
<div id="errors"></div>
<section id="dns-section" hidden>
<h2>DNS records still needed</h2>
<div id="dns"></div>
</section>
<h2>Recent events</h2>
<div id="events"></div>
<p class="muted">Read-only: this page shows <a href="status">/status</a>, <a href="status/resources">/status/resources</a> and <a href="events">/events</a>, refreshed every ${PAGE_REFRESH_MS / 1000} seconds.</p>
</main>`;

function sha256(text: string): string {
  return `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
}

/** The page, as served. */
export const STATUS_PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>edgesync status</title>
<style>${STYLE}</style>
</head>
<body>
${BODY}
<script>${SCRIPT}</script>
</body>
</html>
`;

/**
 * The page's response headers: its own script and style only (by hash), requests to its own
 * origin only, never framed.
 */
export const STATUS_PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': [
    "default-src 'none'",
    `script-src ${sha256(SCRIPT)}`,
    `style-src ${sha256(STYLE)}`,
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};
