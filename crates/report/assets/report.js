/* rttdoc HTML report: inlined into the page by crates/report/src/html.rs.
 * Hand-written, no library, nothing fetched. The page's data is JSON in
 * <script type="application/json"> blocks: the overview and the rows are
 * parsed at load, a connection's block only when it is opened, and only
 * the opened connection is drawn, so a capture of any size opens at once.
 *
 * URL hash: #stream=N&finding=K (K: index in the connection's findings)
 * opens that connection with that finding zoomed; &only=detail hides the
 * overview. By default the connection that lost the most time opens with
 * its costliest finding that has evidence frames. */
(function () {
  'use strict';
  var errors = [];
  function showErrors() {
    var el = document.getElementById('rttdoc-errors');
    if (!el) return;
    el.textContent = errors.join('\n');
    el.setAttribute('data-count', String(errors.length));
    el.hidden = errors.length === 0;
  }
  window.addEventListener('error', function (e) {
    errors.push('Uncaught ' + (e.message || e.type));
    showErrors();
  });
  window.addEventListener('unhandledrejection', function (e) {
    errors.push('Unhandled rejection ' + String(e.reason));
    showErrors();
  });

  var SVGNS = 'http://www.w3.org/2000/svg';
  var FLAG = { FIN: 1, SYN: 2, RST: 4, PSH: 8, ACK: 16 };
  // Packet array fields (html.rs `packets`).
  var F = 0, T = 1, D = 2, FL = 3, SEQ = 4, LEN = 5, ACK = 6, WIN = 7, MARK = 8, SACK = 9;

  function el(tag, attrs, children) {
    var e = document.createElement(tag);
    setAttrs(e, attrs);
    append(e, children);
    return e;
  }
  function sv(tag, attrs, children) {
    var e = document.createElementNS(SVGNS, tag);
    setAttrs(e, attrs);
    append(e, children);
    return e;
  }
  function setAttrs(e, attrs) {
    if (!attrs) return;
    for (var k in attrs) {
      if (!Object.prototype.hasOwnProperty.call(attrs, k) || attrs[k] === null || attrs[k] === undefined) continue;
      if (k === 'text') e.textContent = attrs[k];
      else if (k === 'onclick') e.addEventListener('click', attrs[k]);
      else e.setAttribute(k, attrs[k]);
    }
  }
  function append(e, children) {
    if (children === null || children === undefined) return;
    if (!Array.isArray(children)) children = [children];
    children.forEach(function (c) {
      if (c === null || c === undefined || c === false) return;
      e.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
    });
  }
  function title(node, text) {
    node.appendChild(sv('title', { text: text }));
    return node;
  }

  function fmtMs(ms) {
    if (ms === null || ms === undefined) return '–';
    var a = Math.abs(ms);
    if (a >= 1000) return (ms / 1000).toFixed(2) + ' s';
    if (a >= 10) return ms.toFixed(1) + ' ms';
    if (a >= 0.1 || ms === 0) return ms.toFixed(2) + ' ms';
    return (ms * 1000).toFixed(0) + ' µs';
  }
  function fmtRtt(r) {
    if (r === null || r === undefined) return '–';
    return (Math.abs(r) >= 100 ? r.toFixed(0) : r.toFixed(1)) + ' RTT';
  }
  function fmtBytes(b) {
    var a = Math.abs(b);
    if (a >= 1048576) return (b / 1048576).toFixed(a >= 10485760 ? 0 : 1) + ' MB';
    if (a >= 1024) return (b / 1024).toFixed(a >= 10240 ? 0 : 1) + ' KB';
    return String(b);
  }
  function pct(n, d) {
    return d > 0 ? (100 * n / d).toFixed(n === d || n === 0 ? 0 : 1) + '%' : '–';
  }
  function flagNames(f) {
    var n = [];
    if (f & FLAG.SYN) n.push('SYN');
    if (f & FLAG.FIN) n.push('FIN');
    if (f & FLAG.RST) n.push('RST');
    if (f & FLAG.PSH) n.push('PSH');
    if (f & FLAG.ACK) n.push('ACK');
    return n.join(',');
  }
  /* Nice tick values covering [lo, hi], about n of them. */
  function ticks(lo, hi, n) {
    var span = hi - lo;
    if (!(span > 0)) return [lo];
    var step = Math.pow(10, Math.floor(Math.log10(span / n)));
    var err = span / n / step;
    if (err >= 7.5) step *= 10;
    else if (err >= 3.5) step *= 5;
    else if (err >= 1.5) step *= 2;
    var out = [];
    for (var v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(v);
    return out;
  }

  var overview = JSON.parse(document.getElementById('rttdoc-overview').textContent);
  var rows = JSON.parse(document.getElementById('rttdoc-rows').textContent);
  var blocks = {};
  var order = [];
  Array.prototype.forEach.call(document.querySelectorAll('script.rttdoc-conn'), function (s) {
    blocks[s.getAttribute('data-stream')] = s;
    order.push(Number(s.getAttribute('data-stream')));
  });
  var parsed = {};
  function conn(stream) {
    if (!(stream in parsed)) {
      var b = blocks[stream];
      parsed[stream] = b ? JSON.parse(b.textContent) : null;
    }
    return parsed[stream];
  }

  var app = document.getElementById('app');
  var state = { stream: null, finding: null, dir: null, t0: 0, t1: 0, only: false };

  function parseHash() {
    var h = {};
    (location.hash || '').replace(/^#/, '').split('&').forEach(function (kv) {
      var i = kv.indexOf('=');
      if (i > 0) h[kv.slice(0, i)] = decodeURIComponent(kv.slice(i + 1));
    });
    return h;
  }

  /* ------------------------------------------------------------ overview */

  function card(label, value, sub) {
    return el('div', { class: 'card' }, [el('span', { class: 'muted', text: label }), el('b', { text: value }), sub ? el('span', { class: 'muted', text: sub }) : null]);
  }

  function renderOverview(root) {
    var o = overview;
    var lost = o.excess_ms_total + o.stall_ms_total;
    root.appendChild(el('div', { class: 'cards', 'data-section': 'summary' }, [
      card('Connections', String(o.connections), o.over_ideal + ' over the ideal by ≥ 1 RTT'),
      card('Time lost', fmtMs(lost), 'latency ' + fmtMs(o.excess_ms_total) + ', transfer stalls ' + fmtMs(o.stall_ms_total)),
      card('Latency explained', fmtMs(o.explained_ms), 'by the findings; ' + (o.turnaround_ms > 0 ? 'the hosts\' own short turnarounds ' + fmtMs(o.turnaround_ms) + ', ' : '') + (o.path_queue_ms > 0 ? 'the path\'s queues ' + fmtMs(o.path_queue_ms) + ', ' : '') + 'unexplained ' + fmtMs(Math.max(0, o.unexplained_ms - (o.turnaround_ms || 0) - (o.path_queue_ms || 0)))),
      card('TLS resumption', pct(o.resumed, o.tls_connections), o.resumed + ' of ' + o.tls_connections + ' TLS connections'),
      card('TCP Fast Open', o.tfo_attempts ? pct(o.tfo_accepted, o.tfo_attempts) + ' accepted' : 'not tried', o.tfo_accepted + ' of ' + o.tfo_attempts + ' SYNs with data'),
      card('0-RTT early data', o.early_data_sent ? pct(o.early_data_accepted, o.early_data_sent) + ' accepted' : 'not sent', o.early_data_accepted + ' of ' + o.early_data_sent + ' sent'),
      card('Frames', String(o.frames), o.tcp_segments + ' TCP' + (o.damaged ? ', ' + o.damaged + ' damaged' : ''))
    ]));
    (o.notes || []).forEach(function (n) {
      root.appendChild(el('p', { class: 'note', 'data-section': 'capture-note', text: n }));
    });
    if (o.error) root.appendChild(el('p', { class: 'note', text: 'Reading stopped early: ' + o.error }));

    root.appendChild(el('h2', { text: 'Causes, by time lost' }));
    if (!o.causes.length) {
      root.appendChild(el('p', { class: 'muted', text: 'No finding on any connection.' }));
    } else {
      var t = el('table', { 'data-section': 'causes' }, el('tr', null, [el('th', { text: 'Cause' }), el('th', { class: 'num', text: 'Connections' }), el('th', { class: 'num', text: 'Cost' }), el('th', { class: 'num', text: 'of it latency' }), el('th', { class: 'num', text: 'stalls' }), el('th', { text: 'Fix' })]));
      o.causes.forEach(function (c) {
        t.appendChild(el('tr', null, [el('td', null, [el('span', { class: 'kind', text: c.kind }), el('div', { class: 'muted', text: c.doc })]), el('td', { class: 'num', text: String(c.connections) }), el('td', { class: 'num', text: fmtMs(c.cost_ms) }), el('td', { class: 'num', text: fmtMs(c.latency_ms) }), el('td', { class: 'num', text: fmtMs(c.stall_ms) }), el('td', null, [el('span', { text: c.fix })].concat((c.other_fixes || []).map(function (o) { return el('div', { class: 'muted', text: 'Also (' + fmtMs(o.cost_ms) + ' on ' + o.connections + ' connection' + (o.connections === 1 ? '' : 's') + '): ' + o.fix }); })))]));
      });
      root.appendChild(t);
    }

    root.appendChild(el('h2', { text: 'TLS handshake round trips, by version' }));
    if (!o.handshakes.length) {
      root.appendChild(el('p', { class: 'muted', text: 'No complete TLS handshake.' }));
    } else {
      var wrap = el('div', { class: 'cards' });
      o.handshakes.forEach(function (h) { wrap.appendChild(histogram(h, o.handshake_bin_rtts)); });
      root.appendChild(wrap);
    }

    root.appendChild(el('h2', { text: 'Connections, by time lost' }));
    root.appendChild(connectionTable());
    if (o.quic) renderQuic(root, o.quic);
  }

  /* QUIC connections: their handshakes and what cost them round trips. */
  function renderQuic(root, q) {
    root.appendChild(el('h2', { text: 'QUIC connections' }));
    root.appendChild(el('p', { class: 'muted', text: q.connections + ' connection' + (q.connections === 1 ? '' : 's') + ' over UDP, ' + q.handshakes + ' handshake' + (q.handshakes === 1 ? '' : 's') + ' finished in the capture, ' + fmtMs(q.excess_ms) + ' beyond their ideal (1 RTT each)' }));
    if (q.causes.length) {
      var c = el('table', { 'data-section': 'quic-causes' }, el('tr', null, [el('th', { text: 'Cause' }), el('th', { class: 'num', text: 'Connections' }), el('th', { class: 'num', text: 'Cost' }), el('th', { text: 'Fix' })]));
      q.causes.forEach(function (x) {
        c.appendChild(el('tr', null, [el('td', null, [el('span', { class: 'kind', text: x.kind }), el('div', { class: 'muted', text: x.doc })]), el('td', { class: 'num', text: String(x.connections) }), el('td', { class: 'num', text: fmtMs(x.cost_ms) }), el('td', { text: x.fix })]));
      });
      root.appendChild(c);
    }
    var t = el('table', { 'data-section': 'quic' }, el('tr', null, ['#', 'Client', 'Server', 'Version', 'RTT', 'Handshake', 'Excess', 'Findings'].map(function (h, i) {
      return el('th', { class: i >= 4 && i <= 6 ? 'num' : null, text: h });
    })));
    q.rows.forEach(function (r) {
      var findings = r.findings.map(function (f) {
        return el('div', null, [el('span', { class: 'kind', text: f.kind }), el('span', { text: ' ' + fmtMs(f.cost_ms) + ' (frames ' + f.frames.join(', ') + '): ' + f.explanation }), el('div', { class: 'muted', text: 'Fix: ' + f.fix })]);
      });
      if (r.zero_rtt) findings.push(el('span', { class: 'muted', text: '0-RTT' }));
      t.appendChild(el('tr', null, [
        el('td', { class: 'num', text: String(r.number) }),
        el('td', { text: r.client }),
        el('td', { text: r.server_name ? r.server_name + ' (' + r.server + ')' : r.server }),
        el('td', { text: r.version }),
        el('td', { class: 'num', text: r.rtt_ms == null ? '-' : fmtMs(r.rtt_ms) }),
        el('td', { class: 'num', text: r.handshake_ms == null ? 'unfinished' : fmtMs(r.handshake_ms) }),
        el('td', { class: 'num', text: fmtMs(r.excess_ms) }),
        el('td', null, findings)
      ]));
    });
    root.appendChild(t);
    if (q.connections > q.rows.length) root.appendChild(el('p', { class: 'muted', text: '... and ' + (q.connections - q.rows.length) + ' more (rttdoc analyze --json for all)' }));
  }

  function histogram(h, binw) {
    var W = 380, H = 150, L = 34, B = 26, top = 8;
    var max = Math.max.apply(null, h.bins.concat([1]));
    var last = h.bins.length;
    while (last > 4 && h.bins[last - 1] === 0) last--;
    var bw = (W - L - 8) / last;
    var g = sv('svg', { width: W, height: H, 'data-histogram': h.version });
    g.appendChild(sv('line', { class: 'axis', x1: L, y1: H - B, x2: W - 4, y2: H - B, stroke: '#8995a1' }));
    for (var i = 0; i < last; i++) {
      var v = h.bins[i];
      var bh = (H - B - top) * v / max;
      var r = sv('rect', { x: L + i * bw + 1, y: H - B - bh, width: Math.max(bw - 2, 1), height: bh, fill: '#1f6fd1' });
      var lo = i * binw, hi = (i + 1) * binw;
      title(r, v + ' handshake(s) of ' + lo.toFixed(2) + (i === h.bins.length - 1 ? '+' : '–' + hi.toFixed(2)) + ' RTT');
      g.appendChild(r);
      if (i % 4 === 0) g.appendChild(sv('text', { x: L + i * bw, y: H - B + 14, text: lo.toFixed(0) }));
    }
    g.appendChild(sv('text', { x: W - 40, y: H - 4, text: 'RTTs' }));
    g.appendChild(sv('text', { x: 2, y: top + 10, text: String(max) }));
    var stats = 'p50 ' + fmtRtt(h.p50) + ' · p90 ' + fmtRtt(h.p90) + ' · p99 ' + fmtRtt(h.p99);
    return el('div', { class: 'card' }, [el('b', { text: h.version }), el('span', { class: 'muted', text: stats }), g]);
  }

  var PAGE = 200;
  function connectionTable() {
    var box = el('div', { 'data-section': 'connections' });
    var filter = el('input', { type: 'search', placeholder: 'filter: address, port, cause…', size: 40 });
    var count = el('span', { class: 'muted' });
    var table = el('table');
    var more = el('button', { text: 'Show more' });
    var shown = PAGE;
    var list = rows;
    function head() {
      return el('tr', null, ['Stream', 'Client', 'Server', 'Time lost', 'Excess', 'RTT', 'TLS', 'TLS RTTs / ideal', 'Duration', 'Findings'].map(function (h, i) {
        return el('th', { class: i >= 3 && i <= 8 ? 'num' : null, text: h });
      }));
    }
    function draw() {
      table.textContent = '';
      table.appendChild(head());
      list.slice(0, shown).forEach(function (r) {
        var drawn = String(r[0]) in blocks;
        var tr = el('tr', { class: drawn ? 'drawn' : null, 'data-stream': r[0], title: drawn ? 'Open the graphs of this connection' : 'Not drawn: use --all, --top N or --stream ' + r[0] }, [
          el('td', { class: 'mono', text: String(r[0]) }), el('td', { class: 'mono', text: r[1] }), el('td', { class: 'mono', text: r[2] }),
          el('td', { class: 'num', text: fmtMs(r[3]) }), el('td', { class: 'num', text: fmtRtt(r[4]) }), el('td', { class: 'num', text: fmtMs(r[5]) }),
          el('td', { class: 'num', text: r[6] || '' }), el('td', { class: 'num', text: r[7] === null ? '' : r[7].toFixed(2) + ' / ' + (r[8] === null ? '?' : r[8]) }),
          el('td', { class: 'num', text: fmtMs(r[9]) }),
          el('td', null, r[10].map(function (k) { return el('span', { class: 'kind', text: k }); }))
        ]);
        if (state.stream === r[0]) tr.className += ' open';
        if (drawn) tr.addEventListener('click', function () { openConnection(r[0], null, true); });
        table.appendChild(tr);
      });
      count.textContent = 'showing ' + Math.min(shown, list.length) + ' of ' + list.length + (overview.connections > rows.length ? ' (the ' + rows.length + ' that lost the most, of ' + overview.connections + ')' : '');
      more.hidden = shown >= list.length;
    }
    filter.addEventListener('input', function () {
      var q = filter.value.trim().toLowerCase();
      list = !q ? rows : rows.filter(function (r) {
        return (r[0] + ' ' + r[1] + ' ' + r[2] + ' ' + (r[6] || '') + ' ' + r[10].join(' ')).toLowerCase().indexOf(q) >= 0;
      });
      shown = PAGE;
      draw();
    });
    more.addEventListener('click', function () { shown += PAGE; draw(); });
    box.appendChild(el('div', { class: 'toolbar' }, [filter, count]));
    box.appendChild(table);
    box.appendChild(more);
    box.redraw = draw;
    draw();
    return box;
  }

  /* ---------------------------------------------------------- connection */

  function packetIndex(c) {
    if (c._index) return c._index;
    var m = {};
    (c.packets || []).forEach(function (p, i) { m[p[F]] = i; });
    c._index = m;
    return m;
  }
  function timeOf(c, frame) {
    var i = packetIndex(c)[frame];
    return i === undefined ? null : c.packets[i][T];
  }
  /* The sender whose data a finding is about: the held segment's. */
  function findingDir(c, f) {
    var idx = packetIndex(c);
    var frames = f.waits.map(function (w) { return w.to; }).concat(f.frames);
    for (var i = 0; i < frames.length; i++) {
      var p = c.packets[idx[frames[i]]];
      if (p && (p[LEN] > 0 || (p[FL] & (FLAG.SYN | FLAG.FIN)))) return p[D];
    }
    return busiestDir(c);
  }
  function busiestDir(c) {
    var bytes = [0, 0];
    (c.packets || []).forEach(function (p) { bytes[p[D]] += p[LEN]; });
    return bytes[1] >= bytes[0] ? 1 : 0;
  }
  /* The time span that shows a finding: its first waits (up to four, so a
   * repeating stall shows as a pattern), or its evidence frames, with a
   * margin of a quarter of the span and at least one RTT. */
  function findingSpan(c, f) {
    var times = [];
    var waits = f.waits.slice().sort(function (a, b) { return (timeOf(c, a.from) || 0) - (timeOf(c, b.from) || 0); });
    waits.slice(0, 4).forEach(function (w) {
      [w.from, w.to, w.release].forEach(function (fr) { var t = timeOf(c, fr); if (t !== null) times.push(t); });
    });
    if (!times.length) f.frames.forEach(function (fr) { var t = timeOf(c, fr); if (t !== null) times.push(t); });
    if (!times.length) return null;
    var lo = Math.min.apply(null, times), hi = Math.max.apply(null, times);
    var pad = Math.max((hi - lo) * 0.25, c.rtt_ms || 0, 0.5);
    return [Math.max(0, lo - pad), Math.min(c.duration_ms, hi + pad)];
  }
  /* A long connection's finding lists its first 1024 waits and counts
   * the rest (unlisted_waits). */
  function waitCount(f) {
    var all = f.waits.length + (f.unlisted_waits || 0);
    return all > f.waits.length ? all + ' waits (the first ' + f.waits.length + ' drawn)' : f.waits.length + ' wait(s)';
  }

  /* The finding the page opens on: a cause before a summary of causes
   * (tls_extra_rtt), one with waits (a held segment to show) before one
   * without, then the costliest; only findings with evidence frames. */
  function defaultFinding(c) {
    var best = null;
    function rank(f) { return [f.summary ? 0 : 1, f.waits.length ? 1 : 0, f.cost_ms]; }
    function better(a, b) {
      for (var k = 0; k < a.length; k++) if (a[k] !== b[k]) return a[k] > b[k];
      return false;
    }
    c.findings.forEach(function (f, i) {
      if (!f.frames.length) return;
      if (best === null || better(rank(f), rank(c.findings[best]))) best = i;
    });
    return best;
  }

  var detailRoot = null;
  var tableBox = null;

  function openConnection(stream, finding, scroll) {
    var c = conn(stream);
    if (!c) return;
    state.stream = stream;
    state.finding = finding === null || finding === undefined ? defaultFinding(c) : finding;
    var f = state.finding === null ? null : c.findings[state.finding];
    state.dir = f ? findingDir(c, f) : busiestDir(c);
    var span = f ? findingSpan(c, f) : null;
    state.t0 = span ? span[0] : 0;
    state.t1 = span ? span[1] : Math.max(c.duration_ms, 0.001);
    renderConnection(c);
    if (tableBox) tableBox.redraw();
    if (scroll && detailRoot.scrollIntoView) detailRoot.scrollIntoView();
  }

  function renderConnection(c) {
    var root = detailRoot;
    root.textContent = '';
    root.setAttribute('data-stream', c.stream);
    root.appendChild(el('h2', { text: 'Stream ' + c.stream + ': ' + c.client + ' → ' + c.server }));
    var tls = c.tls;
    var facts = [
      'RTT ' + fmtMs(c.rtt_ms), 'vantage: ' + c.vantage, 'duration ' + fmtMs(c.duration_ms), 'ended: ' + c.ending,
      tls && tls.version ? tls.version + (tls.resumed ? ' resumed' : '') + (tls.sni ? ' · ' + tls.sni : '') : 'no TLS',
      c.tfo ? 'TFO: ' + c.tfo : null,
      c.lookup ? 'name lookup ' + c.lookup.name + ' ' + fmtMs(c.lookup.ms) + ' (' + c.lookup.queries + ' queries, before the SYN)' : null,
      'time lost ' + fmtMs(c.lost_ms) + ' (latency ' + fmtMs(c.excess_ms) + ', stalls ' + fmtMs(c.stall_ms) + ')'
    ].filter(Boolean);
    root.appendChild(el('p', { class: 'muted', text: facts.join(' · ') + (c.partial ? ' · the capture missed its SYN' : '') }));

    root.appendChild(el('h3', { text: 'Ledger: where the time went, against the ideal' }));
    root.appendChild(ledgerBars(c));

    root.appendChild(el('h3', { text: 'Findings' }));
    var turnarounds = c.turnaround_ms > 0 ? ' (of it, ' + fmtMs(c.turnaround_ms) + ' the hosts\' own turnarounds, each too short to be a cause)' : '';
    if (!c.findings.length) root.appendChild(el('p', { class: 'muted', text: 'None: ' + (c.excess_ms > 0 ? fmtMs(c.unexplained_ms) + ' beyond the ideal that no detector explains' + turnarounds + '.' : 'the connection took the round trips it needed.') }));
    c.findings.forEach(function (f, i) {
      var sel = i === state.finding;
      var box = el('div', { class: 'finding' + (sel ? ' selected' : ''), 'data-finding': f.kind, 'data-index': i }, [
        el('div', { class: 'head' }, [
          el('span', { class: 'kind', text: f.kind }),
          el('span', { class: 'cost', text: (f.cost_ms < 0 ? 'saved ' + fmtMs(-f.cost_ms) : 'cost ' + fmtMs(f.cost_ms)) + (f.cost_rtts !== null ? ' (' + fmtRtt(f.cost_rtts) + ')' : '') }),
          f.phase ? el('span', { class: 'muted', text: 'in ' + f.phase }) : null,
          el('span', { class: 'muted', text: 'confidence ' + Math.round(f.confidence * 100) + '%' }),
          f.frames.length ? el('button', { class: sel ? 'on' : null, text: sel ? 'Shown below' : 'Zoom graph and ladder to it', onclick: function () { openConnection(c.stream, i, false); location.hash = 'stream=' + c.stream + '&finding=' + i; } }) : null
        ]),
        el('p', { text: f.explanation || f.doc }),
        el('p', null, [el('b', { text: 'Fix: ' }), f.fix || f.short_fix]),
        el('p', null, [el('b', { text: 'Wireshark: ' }), el('code', { text: f.filter })]),
        el('p', { class: 'muted', text: 'Evidence frames: ' + (f.frames.join(', ') || 'none') + (f.waits.length ? ' · ' + waitCount(f) : '') })
      ]);
      root.appendChild(box);
    });

    if (!c.packets) {
      root.appendChild(el('p', { class: 'note', text: 'No per-packet data for this connection.' }));
      return;
    }
    var f = state.finding === null ? null : c.findings[state.finding];
    root.appendChild(el('h3', { text: 'Time-sequence graph' + (f ? ': zoomed to ' + f.kind : '') }));
    var dirBtns = [0, 1].map(function (d) {
      return el('button', { class: state.dir === d ? 'on' : null, text: d === 0 ? 'client → server data' : 'server → client data', onclick: function () { state.dir = d; renderConnection(c); } });
    });
    var span = f ? findingSpan(c, f) : null;
    root.appendChild(el('div', { class: 'toolbar' }, dirBtns.concat([
      el('button', { text: 'Whole connection', onclick: function () { state.t0 = 0; state.t1 = Math.max(c.duration_ms, 0.001); renderConnection(c); } }),
      span ? el('button', { text: 'Zoom to ' + f.kind, onclick: function () { state.t0 = span[0]; state.t1 = span[1]; renderConnection(c); } }) : null,
      el('button', { text: 'Zoom out ×2', onclick: function () { var m = (state.t0 + state.t1) / 2, h = state.t1 - state.t0; state.t0 = Math.max(0, m - h); state.t1 = Math.min(c.duration_ms, m + h); renderConnection(c); } }),
      el('span', { class: 'muted', text: fmtMs(state.t0) + ' – ' + fmtMs(state.t1) + ' after the first frame' + (c.dropped ? ' · ' + c.dropped + ' later packets not kept' : '') })
    ])));
    root.appendChild(el('div', { class: 'legend' }, [
      el('span', null, [el('i', { style: 'background:#1d232a' }), 'segment (sequence range)']),
      el('span', null, [el('i', { style: 'background:#d2302c' }), 'retransmission']),
      el('span', null, [el('i', { style: 'background:#1c8a3a' }), 'ACK line (peer)']),
      el('span', null, [el('i', { style: 'background:#b58900' }), 'receive window edge']),
      el('span', null, [el('i', { style: 'background:#8e44ad' }), 'SACK block']),
      el('span', null, [el('i', { style: 'background:rgba(210,48,44,.35);height:10px' }), 'wait (finding)']),
      el('span', null, [el('i', { style: 'background:#e67e22' }), 'evidence frame'])
    ]));
    var mini = sv('svg', { width: 1200, height: 110, 'data-graph': 'overview', class: 'graph-mini' });
    drawGraph(mini, c, state.dir, 0, Math.max(c.duration_ms, 0.001), true);
    root.appendChild(mini);
    var main = sv('svg', { width: 1200, height: 430, 'data-graph': 'zoom', class: 'graph' });
    drawGraph(main, c, state.dir, state.t0, state.t1, false);
    root.appendChild(main);

    root.appendChild(el('h3', { text: 'Timed ladder' + (f ? ': ' + f.kind : '') }));
    root.appendChild(ladder(c));
  }

  var PHASE_COLORS = { tcp_handshake: '#5b8def', proxy_connect: '#8e6cef', starttls: '#8e6cef', tls_handshake: '#2fa37a', first_byte: '#e0a020', transfer: '#8995a1' };
  function ledgerBars(c) {
    var W = 1200, L = 70, R = 10, H = 78;
    var rows = c.ledger;
    var measured = rows.reduce(function (s, r) { return s + r.duration_ms; }, 0);
    var ideal = rows.reduce(function (s, r) { return s + (r.ideal_rtts || 0) * (c.rtt_ms || 0); }, 0);
    var total = Math.max(measured, ideal, 0.001);
    var k = (W - L - R) / total;
    var g = sv('svg', { width: W, height: H, 'data-ledger': c.stream });
    g.appendChild(sv('text', { x: 0, y: 22, text: 'measured' }));
    g.appendChild(sv('text', { x: 0, y: 54, text: 'ideal' }));
    var x = L, xi = L;
    rows.forEach(function (r) {
      var w = r.duration_ms * k, color = PHASE_COLORS[r.phase] || '#8995a1';
      var rect = sv('rect', { x: x, y: 8, width: Math.max(w, 0.5), height: 22, fill: color, 'data-phase': r.phase });
      title(rect, r.label + ': ' + fmtMs(r.duration_ms) + ' = ' + fmtRtt(r.rtts) + ', ideal ' + (r.ideal_rtts === null ? '?' : r.ideal_rtts + ' RTT') + ' (' + r.ideal_basis + ')' + (r.excess_ms ? ', excess ' + fmtMs(r.excess_ms) : '') + ' · frames ' + r.start_frame + '–' + r.end_frame);
      g.appendChild(rect);
      if (w > 70) g.appendChild(sv('text', { class: 'bar-label', x: x + 4, y: 23, text: r.phase.replace('_', ' ') + ' ' + fmtMs(r.duration_ms) }));
      var iw = (r.ideal_rtts || 0) * (c.rtt_ms || 0) * k;
      var ir = sv('rect', { x: xi, y: 40, width: Math.max(iw, 0.5), height: 22, fill: color, opacity: 0.55 });
      title(ir, r.label + ': ideal ' + (r.ideal_rtts === null ? '?' : r.ideal_rtts + ' RTT') + ' — ' + r.ideal_basis);
      g.appendChild(ir);
      if (iw > 70) g.appendChild(sv('text', { class: 'bar-label', x: xi + 4, y: 55, text: r.phase.replace('_', ' ') + ' ' + (r.ideal_rtts || 0) + ' RTT' }));
      x += w;
      xi += iw;
    });
    g.appendChild(sv('text', { x: W - R, y: 72, 'text-anchor': 'end', text: 'measured ' + fmtMs(measured) + ' · ideal ' + fmtMs(ideal) + ' (' + rows.length + ' phases)' }));
    return g;
  }

  /* ------------------------------------------------ time-sequence graph */

  function drawGraph(svg, c, dir, t0, t1, mini) {
    var W = Number(svg.getAttribute('width')), H = Number(svg.getAttribute('height'));
    var M = mini ? { l: 70, r: 10, t: 6, b: 18 } : { l: 70, r: 10, t: 10, b: 34 };
    var P = c.packets;
    var visible = [];
    var lo = Infinity, hi = -Infinity, winHi = -Infinity;
    for (var i = 0; i < P.length; i++) {
      var p = P[i];
      if (p[T] < t0 || p[T] > t1) continue;
      visible.push(p);
      if (p[D] === dir) {
        var end = p[SEQ] + p[LEN] + ((p[FL] & (FLAG.SYN | FLAG.FIN)) ? 1 : 0);
        lo = Math.min(lo, p[SEQ]);
        hi = Math.max(hi, end);
      } else if (p[ACK] !== null) {
        lo = Math.min(lo, p[ACK]);
        hi = Math.max(hi, p[ACK]);
        if (p[WIN] !== null) winHi = Math.max(winHi, p[ACK] + p[WIN]);
      }
    }
    if (lo === Infinity) { lo = 0; hi = 1; }
    // The window edge joins the scale unless it would flatten the data
    // (a megabyte window over a few hundred bytes): then it is clipped.
    var winClipped = false;
    if (winHi > hi) {
      if (winHi - lo <= 3 * Math.max(hi - lo, 1)) hi = winHi;
      else winClipped = true;
    }
    if (hi - lo < 10) { hi = lo + 10; }
    var padY = (hi - lo) * 0.05;
    lo = Math.max(0, lo - padY); hi = hi + padY;
    var span = Math.max(t1 - t0, 1e-6);
    function X(t) { return M.l + (t - t0) / span * (W - M.l - M.r); }
    function Y(s) { return H - M.b - (s - lo) / (hi - lo) * (H - M.t - M.b); }
    var clipId = 'clip-' + (mini ? 'mini' : 'main');
    svg.appendChild(sv('defs', null, sv('clipPath', { id: clipId }, sv('rect', { x: M.l, y: M.t, width: W - M.l - M.r, height: H - M.t - M.b }))));
    // Axes and grid.
    var ax = sv('g', { class: 'axis' });
    ticks(t0, t1, mini ? 8 : 10).forEach(function (t) {
      if (!mini) ax.appendChild(sv('line', { class: 'grid', x1: X(t), x2: X(t), y1: M.t, y2: H - M.b }));
      ax.appendChild(sv('text', { x: X(t) - 12, y: H - M.b + 13, text: fmtMs(t) }));
    });
    if (!mini) {
      ticks(lo, hi, 7).forEach(function (s) {
        ax.appendChild(sv('line', { class: 'grid', x1: M.l, x2: W - M.r, y1: Y(s), y2: Y(s) }));
        ax.appendChild(sv('text', { x: 4, y: Y(s) + 4, text: fmtBytes(Math.round(s)) }));
      });
      ax.appendChild(sv('text', { x: W / 2 - 120, y: H - 4, text: 'time since the first frame (capture clock)' }));
      ax.appendChild(sv('text', { x: 4, y: M.t + 2, text: 'seq (bytes)' }));
    }
    ax.appendChild(sv('path', { d: 'M' + M.l + ' ' + M.t + 'V' + (H - M.b) + 'H' + (W - M.r), fill: 'none' }));
    svg.appendChild(ax);
    var plot = sv('g', { 'clip-path': 'url(#' + clipId + ')' });
    svg.appendChild(plot);

    // Waits of every finding (the selected one darker).
    var sel = state.finding;
    c.findings.forEach(function (f, fi) {
      f.waits.forEach(function (w) {
        var a = timeOf(c, w.from), b = timeOf(c, w.to);
        if (a === null || b === null || b < t0 || a > t1) return;
        var r = sv('rect', { class: 'wait' + (fi === sel ? ' sel' : ''), x: X(a), y: M.t, width: Math.max(X(b) - X(a), 1), height: H - M.t - M.b, 'data-finding': f.kind, 'data-wait': w.to });
        title(r, f.kind + ': waited ' + fmtMs(w.ms) + ' from frame ' + w.from + ' to ' + w.to + (w.release ? ', released by frame ' + w.release : ''));
        plot.appendChild(r);
        if (!mini && fi === sel && X(b) - X(a) > 40) plot.appendChild(sv('text', { class: 'lbl held', x: X(a) + 3, y: M.t + 14, text: fmtMs(w.ms) }));
      });
    });

    var seg = [], retx = [], probe = [], retxAt = [], ackD = '', winD = '', sackD = [], dsackD = [];
    var lastAck = null, lastWin = null;
    visible.forEach(function (p) {
      var x = X(p[T]);
      if (p[D] === dir) {
        var len = p[LEN] + ((p[FL] & (FLAG.SYN | FLAG.FIN)) ? 1 : 0);
        if (len === 0) return;
        var y1 = Y(p[SEQ]), y2 = Y(p[SEQ] + len);
        var d = 'M' + x.toFixed(1) + ' ' + y1.toFixed(1) + 'V' + y2.toFixed(1);
        if (!mini) d += 'M' + (x - 2).toFixed(1) + ' ' + y2.toFixed(1) + 'h4M' + (x - 2).toFixed(1) + ' ' + y1.toFixed(1) + 'h4';
        ((p[MARK] & 1) ? retx : (p[MARK] & 2) ? probe : seg).push(d);
        if (p[MARK] & 1) retxAt.push([x, y2]);
      } else if (p[ACK] !== null) {
        var ya = Y(p[ACK]);
        ackD += (lastAck === null ? 'M' + x.toFixed(1) + ' ' + ya.toFixed(1) : 'H' + x.toFixed(1) + 'V' + ya.toFixed(1));
        lastAck = ya;
        if (p[WIN] !== null) {
          var yw = Y(p[ACK] + p[WIN]);
          winD += (lastWin === null ? 'M' + x.toFixed(1) + ' ' + yw.toFixed(1) : 'H' + x.toFixed(1) + 'V' + yw.toFixed(1));
          lastWin = yw;
        }
        (p[SACK] || []).forEach(function (b, bi) {
          var dd = 'M' + x.toFixed(1) + ' ' + Y(b[0]).toFixed(1) + 'V' + Y(b[1]).toFixed(1);
          ((p[MARK] & 4) && bi === 0 ? dsackD : sackD).push(dd);
        });
      }
    });
    var xEnd = X(t1).toFixed(1);
    if (lastAck !== null) ackD += 'H' + xEnd;
    if (lastWin !== null) winD += 'H' + xEnd;
    if (winD) plot.appendChild(sv('path', { class: 'winline', d: winD, 'data-line': 'window' }));
    if (ackD) plot.appendChild(sv('path', { class: 'ackline', d: ackD, 'data-line': 'ack' }));
    if (sackD.length) plot.appendChild(sv('path', { class: 'sack', d: sackD.join(''), 'data-line': 'sack' }));
    if (dsackD.length) plot.appendChild(sv('path', { class: 'dsack', d: dsackD.join(''), 'data-line': 'dsack' }));
    if (seg.length) plot.appendChild(sv('path', { class: 'seg', d: seg.join(''), 'data-line': 'segments' }));
    if (probe.length) plot.appendChild(sv('path', { class: 'seg probe', d: probe.join(''), 'data-line': 'probes' }));
    if (retx.length) plot.appendChild(sv('path', { class: 'seg retx', d: retx.join(''), 'data-line': 'retransmissions' }));
    // tcptrace's R beside each retransmission, while they can be told apart.
    if (!mini && retxAt.length <= 200) retxAt.forEach(function (xy) {
      plot.appendChild(sv('text', { class: 'lbl held', x: xy[0] + 4, y: xy[1] + 4, text: 'R' }));
    });
    if (!mini && winClipped) svg.appendChild(sv('text', { class: 'lbl muted', x: W - M.r - 4, y: M.t + 12, 'text-anchor': 'end', text: 'receive window edge above the view (' + fmtBytes(winHi - lo) + ' from the bottom)' }));

    // Evidence frames of every finding: a ring where the packet is drawn.
    var idx = packetIndex(c);
    c.findings.forEach(function (f, fi) {
      f.frames.forEach(function (fr) {
        var p = P[idx[fr]];
        if (!p || p[T] < t0 || p[T] > t1) return;
        var y;
        if (p[D] === dir) y = Y(p[SEQ] + p[LEN]);
        else if (p[ACK] !== null) y = Y(p[ACK]);
        else return;
        var circ = sv('circle', { class: 'ev' + (fi === sel ? ' sel' : ''), cx: X(p[T]), cy: y, r: mini ? 3 : 6, 'data-finding': f.kind, 'data-frame': fr });
        title(circ, f.kind + ': frame ' + fr);
        plot.appendChild(circ);
      });
    });

    if (!mini) {
      // Drag across the graph to zoom to that span; the wheel zooms
      // around the pointer.
      var drag = null, band = null;
      var tAt = function (e) {
        var r = svg.getBoundingClientRect();
        return t0 + Math.min(Math.max(e.clientX - r.left - M.l, 0), W - M.l - M.r) / (W - M.l - M.r) * span;
      };
      svg.style.cursor = 'crosshair';
      svg.addEventListener('mousedown', function (e) {
        drag = tAt(e);
        band = sv('rect', { class: 'brush', x: X(drag), y: M.t, width: 1, height: H - M.t - M.b });
        svg.appendChild(band);
        e.preventDefault();
      });
      svg.addEventListener('mousemove', function (e) {
        if (drag === null) return;
        var t = tAt(e);
        band.setAttribute('x', X(Math.min(t, drag)));
        band.setAttribute('width', Math.max(Math.abs(X(t) - X(drag)), 1));
      });
      svg.addEventListener('mouseup', function (e) {
        if (drag === null) return;
        var t = tAt(e), a = Math.min(t, drag), b = Math.max(t, drag);
        drag = null;
        if (X(b) - X(a) < 4) { band.remove(); return; }
        state.t0 = a; state.t1 = b;
        renderConnection(c);
      });
      svg.addEventListener('wheel', function (e) {
        e.preventDefault();
        var t = tAt(e), k = e.deltaY > 0 ? 1.5 : 1 / 1.5;
        state.t0 = Math.max(0, t - (t - state.t0) * k);
        state.t1 = Math.min(Math.max(c.duration_ms, 0.001), t + (state.t1 - t) * k);
        renderConnection(c);
      }, { passive: false });
      title(svg, 'Drag across the graph to zoom to that span; the mouse wheel zooms in and out.');
    }
    if (mini) {
      svg.appendChild(sv('rect', { class: 'brush', x: X(state.t0), y: M.t, width: Math.max(X(state.t1) - X(state.t0), 2), height: H - M.t - M.b }));
      svg.style.cursor = 'pointer';
      svg.addEventListener('click', function (e) {
        var r = svg.getBoundingClientRect();
        var t = t0 + (e.clientX - r.left - M.l) / (W - M.l - M.r) * span;
        var half = (state.t1 - state.t0) / 2;
        state.t0 = Math.max(0, t - half);
        state.t1 = Math.min(c.duration_ms, t + half);
        renderConnection(c);
      });
      title(svg, 'The whole connection; the blue box is the zoomed view. Click to move it.');
    }
  }

  /* ------------------------------------------------------- timed ladder */

  var LADDER_MAX = 150;
  var LADDER_MIN = 24;
  var LINE = 13;
  /* The packets the ladder draws: those in the graph's view; at least
   * LADDER_MIN (the nearest ones added around a sparse view), at most
   * LADDER_MAX (those nearest the selected finding's evidence). */
  function ladderPackets(c) {
    var P = c.packets;
    var first = 0, last = P.length - 1;
    while (first < P.length && P[first][T] < state.t0) first++;
    while (last >= 0 && P[last][T] > state.t1) last--;
    if (last < first) { first = 0; last = Math.min(P.length, LADDER_MIN) - 1; }
    while (last - first + 1 < LADDER_MIN && (first > 0 || last < P.length - 1)) {
      if (first > 0) first--;
      if (last < P.length - 1 && last - first + 1 < LADDER_MIN) last++;
    }
    var pk = P.slice(first, last + 1);
    var more = 0;
    if (pk.length > LADDER_MAX) {
      var f = state.finding === null ? null : c.findings[state.finding];
      var centre = f && f.frames.length ? timeOf(c, f.frames[0]) : pk[0][T];
      var at = 0;
      while (at < pk.length - 1 && pk[at][T] < centre) at++;
      var from = Math.max(0, Math.min(at - LADDER_MAX / 3, pk.length - LADDER_MAX));
      more = pk.length - LADDER_MAX;
      pk = pk.slice(from, from + LADDER_MAX);
    }
    return { pk: pk, more: more };
  }

  /* What an evidence packet shows, from the packet itself. */
  function evidenceText(p, kind) {
    if (p[ACK] !== null && p[WIN] === 0) return 'zero window (' + kind + ')';
    if (kind === 'zero_window' && p[WIN] !== null) return 'window opens: ' + fmtBytes(p[WIN]) + ' (' + kind + ')';
    if (p[MARK] & 1) return 'retransmission (' + kind + ')';
    if (p[MARK] & 2) return 'probe (' + kind + ')';
    if (p[FL] & FLAG.SYN) return flagNames(p[FL]) + ' (' + kind + ')';
    return kind;
  }

  /* Labels in one column, each as near its wanted height as the ones
   * before it allow (LINE apart), in order of height. */
  function placeColumn(labels, maxShift) {
    labels.sort(function (a, b) { return a.y - b.y; });
    var last = -Infinity;
    labels.forEach(function (l) {
      var y = Math.max(l.y, last + LINE);
      if (y - l.y > maxShift && !l.important) return;
      l.draw(y);
      last = y;
    });
    return last;
  }

  function ladder(c) {
    var P = c.packets;
    var sel = ladderPackets(c);
    var pk = sel.pk, more = sel.more;
    if (!pk.length) return el('p', { class: 'muted', text: 'No packet to draw.' });
    var t0 = pk[0][T], t1 = pk[pk.length - 1][T];
    var W = 1200, xc = 300, xs = 860, top = 52;
    var H = Math.max(420, Math.min(28 * pk.length + 120, 4400));
    var span = Math.max(t1 - t0, 1e-3);
    var owd = c.rtt_ms ? c.rtt_ms / 2 : span / 40;
    var xcap = c.vantage === 'client' ? xc : c.vantage === 'server' ? xs : (xc + xs) / 2;
    // Time runs down, linear on the capture clock, with one one-way
    // delay above and below so the first and last arrows fit.
    var tA = t0 - owd, tB = t1 + owd;
    function Y(t) { return top + (t - tA) / (tB - tA) * (H - top - 30); }
    var g = sv('svg', { width: W, height: H, 'data-ladder': c.stream, class: 'ladder' });
    g.appendChild(sv('defs', null, [['a', '#44505c'], ['held', '#d2302c'], ['release', '#1f6fd1'], ['evidence', '#e67e22'], ['data', '#1d232a'], ['retx', '#d2302c']].map(function (m) {
      return sv('marker', { id: 'arrow-' + m[0], viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' }, sv('path', { d: 'M0 0L10 5L0 10z', fill: m[1] }));
    })));
    g.appendChild(sv('text', { x: xc, y: 16, 'text-anchor': 'middle', text: 'client ' + c.client }));
    g.appendChild(sv('text', { x: xs, y: 16, 'text-anchor': 'middle', text: 'server ' + c.server }));
    g.appendChild(sv('text', { x: xcap, y: 32, 'text-anchor': 'middle', class: 'lbl muted', text: 'capture point (vantage: ' + c.vantage + ')' }));
    g.appendChild(sv('text', { x: xc - 14, y: 32, 'text-anchor': 'end', class: 'lbl muted', text: xcap === xc ? '' : 'captured at' }));
    g.appendChild(sv('line', { class: 'timeline', x1: xc, x2: xc, y1: top - 12, y2: H - 10 }));
    g.appendChild(sv('line', { class: 'timeline', x1: xs, x2: xs, y1: top - 12, y2: H - 10 }));
    g.appendChild(sv('line', { class: 'capline', x1: xcap, x2: xcap, y1: top - 12, y2: H - 10 }));

    // What frames are to the findings: held segment, releasing packet.
    var selF = state.finding === null ? null : c.findings[state.finding];
    var roles = {};
    function role(fr, r, f, text) {
      (roles[fr] = roles[fr] || []).push({ role: r, kind: f.kind, text: text, sel: f === selF });
    }
    c.findings.forEach(function (f) {
      f.waits.forEach(function (w) {
        role(w.to, 'held', f, 'held ' + fmtMs(w.ms) + ' (' + f.kind + ')');
        if (w.release) role(w.release, 'release', f, 'releases frame ' + w.to + ' (' + f.kind + ')');
      });
      f.frames.forEach(function (fr) {
        if (!(roles[fr] || []).some(function (x) { return x.kind === f.kind; })) role(fr, 'evidence', f, f.kind + ' evidence');
      });
    });
    var tlsNames = {};
    ((c.tls && c.tls.messages) || []).forEach(function (m) { (tlsNames[m[0]] = tlsNames[m[0]] || []).push(m[2]); });

    /* When packet p is at horizontal position x: it crosses the capture
     * point at its capture time and the whole width in one one-way delay. */
    function atX(p, x) {
      var frac = (p[D] === 0 ? x - xcap : xcap - x) / (xs - xc);
      return p[T] + frac * owd;
    }
    var mid = [], right = [], left = [];
    // Hold bars: on the sender's timeline, from where the wait began to
    // the held segment's departure, labelled with the cause.
    var idx = packetIndex(c);
    c.findings.forEach(function (f) {
      f.waits.forEach(function (w) {
        var a = timeOf(c, w.from), b = timeOf(c, w.to);
        var p = P[idx[w.to]];
        if (a === null || b === null || !p || b < tA || a > tB) return;
        var x = p[D] === 0 ? xc - 7 : xs + 7;
        // On the sender's clock: when each packet was at its timeline.
        var xside = p[D] === 0 ? xc : xs;
        var ya = Y(Math.max(atX(P[idx[w.from]], xside), tA)), yb = Y(Math.min(atX(p, xside), tB));
        var bar = sv('line', { class: 'holdbar', x1: x, x2: x, y1: ya, y2: yb, 'data-finding': f.kind, 'data-wait': w.to, opacity: f === selF ? 0.85 : 0.35 });
        title(bar, f.kind + ': held ' + fmtMs(w.ms) + ' (frame ' + w.from + ' → ' + w.to + (w.release ? ', released by ' + w.release : '') + ')');
        g.appendChild(bar);
        var text = 'held ' + fmtMs(w.ms) + ': ' + f.kind;
        var col = p[D] === 0 ? left : right;
        col.push({ y: (ya + yb) / 2 + 4, important: f === selF, draw: function (y) {
          g.appendChild(sv('text', { class: 'lbl held', x: p[D] === 0 ? xc - 14 : xs + 14, 'text-anchor': p[D] === 0 ? 'end' : 'start', y: y, text: text }));
        } });
      });
    });

    pk.forEach(function (p) {
      var t = p[T], fromC = p[D] === 0;
      var x1 = fromC ? xc : xs, x2 = fromC ? xs : xc;
      var ty1 = t - Math.abs(xcap - x1) / (xs - xc) * owd;
      var ty2 = t + Math.abs(x2 - xcap) / (xs - xc) * owd;
      var rs = roles[p[F]] || [];
      var main = rs.filter(function (r) { return r.sel; })[0] || rs[0];
      var cls = main ? main.role : (p[MARK] & 1) ? 'retx' : p[LEN] > 0 ? 'data' : 'a';
      var line = sv('line', { class: 'arrow ' + (cls === 'a' ? '' : cls), x1: x1, y1: Y(ty1), x2: x2, y2: Y(ty2), 'marker-end': 'url(#arrow-' + cls + ')', 'data-frame': p[F] });
      if (rs.length) line.setAttribute('data-finding', rs.map(function (r) { return r.kind; }).join(' '));
      var label = '#' + p[F] + ' ' + flagNames(p[FL]) + (p[LEN] ? ' len ' + p[LEN] : '') + ' seq ' + p[SEQ] + (p[ACK] !== null ? ' ack ' + p[ACK] : '') + (p[WIN] !== null ? ' win ' + p[WIN] : '') + ((p[MARK] & 1) ? ' retransmission' : '') + ((p[MARK] & 2) ? ' probe' : '');
      title(line, label + ' · captured at ' + fmtMs(t) + (tlsNames[p[F]] ? ' · ' + tlsNames[p[F]].join(', ') : '') + rs.map(function (r) { return ' · ' + r.text; }).join(''));
      g.appendChild(line);
      var important = rs.length > 0 || !!tlsNames[p[F]];
      // The packet, on its arrow; TLS messages named.
      mid.push({ y: Y((ty1 + ty2) / 2) - 3, important: important, draw: function (y) {
        var parts = [sv('tspan', { text: '#' + p[F] + ' ' + flagNames(p[FL]) + (p[LEN] ? ' ' + p[LEN] + ' B' : '') + ((p[MARK] & 1) ? ' RETX' : '') + ((p[MARK] & 2) ? ' probe' : '') })];
        (tlsNames[p[F]] || []).forEach(function (n) { parts.push(sv('tspan', { class: 'tls', text: ' ' + n })); });
        g.appendChild(sv('text', { class: 'lbl', x: (xc + xs) / 2, y: y, 'text-anchor': 'middle', 'data-frame': p[F] }, parts));
      } });
      // When the capture saw it.
      left.push({ y: Y(t) + 4, important: false, draw: function (y) {
        g.appendChild(sv('text', { class: 'lbl muted', x: xcap === xc ? xc - 14 : xc - 120, y: y, 'text-anchor': 'end', text: fmtMs(t) }));
      } });
      // What it is to the findings, beside the server's timeline.
      var notes = rs.filter(function (r) { return r.role !== 'held'; }).map(function (r) {
        return r.role === 'evidence' ? { role: r.role, text: evidenceText(p, r.kind) } : r;
      });
      if (notes.length) {
        right.push({ y: Y(fromC ? ty2 : ty1) + 4, important: true, draw: function (y) {
          g.appendChild(sv('text', { x: xs + 14, y: y, 'data-notes': p[F] }, notes.map(function (r) { return sv('tspan', { class: 'lbl ' + r.role, text: r.text + ' ' }); })));
        } });
      }
    });
    var bottom = Math.max(placeColumn(mid, 26), placeColumn(right, 60), placeColumn(left, 20));
    if (bottom + 20 > H) g.setAttribute('height', Math.ceil(bottom + 20));
    var box = el('div', null, [g]);
    box.appendChild(el('p', { class: 'muted', text: 'Time runs down. Arrows cross the capture point at the time the capture saw each packet and take half an RTT (' + fmtMs(owd) + ') from side to side. Red: the held segment, with its wait as a bar on the sender\'s timeline; blue: the packet that released it; orange: other evidence. ' + (more ? more + ' more packets in this view are not drawn: zoom in.' : '') }));
    return box;
  }

  /* ---------------------------------------------------------------- page */

  function render() {
    var h = parseHash();
    state.only = h.only === 'detail';
    app.textContent = '';
    app.appendChild(el('h1', { text: 'rttdoc: ' + overview.file }));
    app.appendChild(el('p', { class: 'muted', text: overview.generator + ' · ' + overview.connections + ' connection(s) · ' + order.length + ' drawn (the ones that lost the most time; --all draws every one)' }));
    app.appendChild(el('pre', { id: 'rttdoc-errors', 'data-count': '0', hidden: 'hidden' }));
    var ov = el('div', { id: 'overview', class: state.only ? 'hidden' : null });
    app.appendChild(ov);
    renderOverview(ov);
    tableBox = ov.querySelector('[data-section=connections]');
    detailRoot = el('div', { id: 'connection' });
    app.appendChild(detailRoot);
    var stream = h.stream !== undefined ? Number(h.stream) : order.length ? order[0] : null;
    if (stream !== null && String(stream) in blocks) {
      openConnection(stream, h.finding !== undefined ? Number(h.finding) : null, false);
    } else if (order.length === 0) {
      detailRoot.appendChild(el('p', { class: 'muted', text: 'No connection is drawn in detail.' }));
    }
    showErrors();
    document.body.setAttribute('data-rendered', 'true');
  }

  var started = window.performance ? performance.now() : 0;
  try {
    render();
    // How long the script took (parsing the overview and drawing): the
    // scale test reads it.
    if (window.performance) {
      document.body.setAttribute('data-parsed-ms', String(Math.round(started)));
      document.body.setAttribute('data-render-ms', String(Math.round(performance.now() - started)));
    }
  } catch (e) {
    errors.push('Uncaught ' + (e && e.stack ? e.stack : String(e)));
    var pre = document.getElementById('rttdoc-errors');
    if (!pre) { pre = el('pre', { id: 'rttdoc-errors' }); document.body.appendChild(pre); }
    showErrors();
    throw e;
  }
  window.addEventListener('hashchange', function () {
    var h = parseHash();
    if (h.stream !== undefined && String(h.stream) in blocks && (Number(h.stream) !== state.stream || Number(h.finding) !== state.finding)) {
      openConnection(Number(h.stream), h.finding !== undefined ? Number(h.finding) : null, true);
    }
  });
})();
