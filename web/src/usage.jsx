// Each share's use over a day, a week or 30 days, from the server's usage history
// (GET /allot/v1/history/usage): used, borrowed and lent instances against the limit, and the
// waiting jobs on a second axis. The last hour too: the server's finest samples, while a day's
// coarser points are still being made.
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { usePoll, fmtTime } from './util.js';
import { Problem, Section } from './common.jsx';

const RANGES = [['1h', 'an hour', 3600e3], ['1d', 'a day', 86400e3], ['7d', 'a week', 7 * 86400e3], ['30d', '30 days', 30 * 86400e3]];

function Chart({ series, stepSeconds }) {
  const el = useRef(null);
  useEffect(() => {
    const pts = series.points || [];
    const xs = pts.map((p) => p[0] / 1000);
    const col = (i) => pts.map((p) => (p[i] == null ? null : Number(p[i])));
    const limit = pts.map(() => (series.limit == null ? null : Number(series.limit)));
    const opts = {
      width: Math.max(320, (el.current?.clientWidth || 800) - 8),
      height: 200,
      scales: { x: { time: true }, n: {}, w: {} },
      axes: [{}, { scale: 'n', label: series.unit || 'instances' }, { scale: 'w', side: 1, label: 'waiting jobs', grid: { show: false } }],
      series: [
        { label: 'time', value: (u, v) => (v == null ? '' : fmtTime(v * 1000)) },
        { label: 'used', stroke: '#2f6fdf', fill: 'rgba(47,111,223,0.12)', scale: 'n' },
        { label: 'borrowed', stroke: '#8e44ad', scale: 'n' },
        { label: 'lent', stroke: '#e67e22', scale: 'n', dash: [6, 4] },
        { label: 'waiting', stroke: '#7f8c8d', scale: 'w', dash: [2, 3] },
        { label: 'limit', stroke: '#222', scale: 'n', width: 1, dash: [10, 5] },
      ],
    };
    const plot = new uPlot(opts, [xs, col(1), col(2), col(3), col(4), limit], el.current);
    return () => plot.destroy();
  }, [series, stepSeconds]);
  return <div ref={el} class="chart" />;
}

export function Usage({ api, queue }) {
  const [range, setRange] = useState('1d');
  const span = RANGES.find((r) => r[0] === range)[2];
  const { data, error } = usePoll(async () => {
    const until = Date.now();
    return api.get('/allot/v1/history/usage', { queue, since: until - span, until });
  }, [api, queue, range], 60000);
  return (
    <Section title={`Utilization of ${queue}`} testid="usage">
      <div class="toolbar">
        {RANGES.map(([key, label]) => (
          <button class={key === range ? 'active' : ''} onClick={() => setRange(key)} data-testid={`range-${key}`}>{label}</button>
        ))}
        {data?.stepSeconds ? <span class="muted"> one point per {data.stepSeconds} s</span> : null}
      </div>
      {error?.missing ? (
        <p class="muted" data-testid="no-history">No history yet: this server keeps none for {queue}, or does not record usage history.</p>
      ) : (
        <Problem error={error} what="the usage history" />
      )}
      {data && (data.series || []).length === 0 && <p class="muted" data-testid="no-history">No history yet for this period.</p>}
      {(data?.series || []).map((s) => (
        <div class="usage-share" data-testid="usage-share" data-share={s.share}>
          <h3>{s.share} <span class="muted">{s.unit} · limit {s.limit ?? '?'}</span></h3>
          <Chart series={s} stepSeconds={data.stepSeconds} />
        </div>
      ))}
    </Section>
  );
}
