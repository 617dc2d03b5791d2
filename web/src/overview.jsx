// Each share of the queue as a bar of its limit, per capacity unit: its own use, the part of its
// limit lent to other shares, the idle rest, and what it borrows beyond its limit; with its
// waiting jobs. Polled every 2 s from GetJobQueueSnapshot; the limits from ListQuotaShares.
import { usePoll, fmtNumber, quantityOf, fmtTime } from './util.js';
import { Problem, Section } from './common.jsx';

async function loadOverview(api, queue) {
  const snapshot = await api.call('GetJobQueueSnapshot', { jobQueue: queue });
  let shares = null;
  let sharesError = null;
  try {
    shares = [];
    let token;
    do {
      const page = await api.call('ListQuotaShares', { jobQueue: queue, maxResults: 100, ...(token ? { nextToken: token } : {}) });
      shares.push(...(page.quotaShares || []));
      token = page.nextToken;
    } while (token);
  } catch (e) {
    shares = null;
    sharesError = e;
  }
  return { snapshot, shares, sharesError };
}

// One row per (share, unit) with the numbers the bar draws.
export function shareRows({ snapshot, shares }) {
  const usage = snapshot?.queueUtilization?.quotaShareUtilization?.topCapacityUtilization || [];
  const byName = new Map(usage.map((u) => [u.quotaShareName, u]));
  const names = new Set([...usage.map((u) => u.quotaShareName), ...(shares || []).map((s) => s.quotaShareName)]);
  const rows = [];
  for (const name of [...names].sort()) {
    const u = byName.get(name) || {};
    const s = (shares || []).find((x) => x.quotaShareName === name);
    const units = new Set([
      ...(u.capacityUsage || []).map((x) => x.capacityUnit),
      ...(s?.capacityLimits || []).map((x) => x.capacityUnit),
    ]);
    for (const unit of [...units].sort()) {
      const used = quantityOf(u.capacityUsage, unit);
      const borrowed = quantityOf(u.borrowed, unit);
      const lent = quantityOf(u.lent, unit);
      rows.push({
        share: name, unit, used, borrowed, lent,
        own: Math.max(0, used - borrowed),
        limit: s ? quantityOf(s.capacityLimits, unit, 'maxCapacity') : null,
        waiting: u.waitingJobs || 0,
        strategy: s?.resourceSharingConfiguration?.strategy || '',
        state: s?.state || '',
      });
    }
  }
  return rows;
}

function Bar({ row, scale }) {
  const limit = row.limit ?? Math.max(row.own + row.lent, 1);
  const pct = (x) => `${(100 * x) / scale}%`;
  const idle = Math.max(0, limit - row.own - row.lent);
  return (
    <div class="share" data-testid="share-bar" data-share={row.share} data-unit={row.unit}
      data-limit={row.limit ?? ''} data-used={row.used} data-own={row.own}
      data-borrowed={row.borrowed} data-lent={row.lent} data-waiting={row.waiting}>
      <div class="share-label">
        <a href={`#/jobs?share=${encodeURIComponent(row.share)}&status=RUNNABLE`} title="its waiting jobs"><strong>{row.share}</strong></a> <span class="muted">{row.unit}{row.strategy ? ` · ${row.strategy}` : ''}{row.state && row.state !== 'ENABLED' ? ` · ${row.state}` : ''}</span>
      </div>
      <div class="bar" title={`limit ${fmtNumber(limit)}`}>
        <span class="seg own" style={{ width: pct(row.own) }} />
        <span class="seg lent" style={{ width: pct(row.lent) }} />
        <span class="seg idle" style={{ width: pct(idle) }} />
        <span class="seg borrowed" style={{ width: pct(row.borrowed) }} />
        <span class="limit-mark" style={{ left: pct(limit) }} />
      </div>
      <div class="share-figures">
        used <b>{fmtNumber(row.used)}</b> of {row.limit == null ? '?' : fmtNumber(row.limit)}
        {' · '}own {fmtNumber(row.own)} · borrowed <b class="t-borrowed">{fmtNumber(row.borrowed)}</b>
        {' · '}lent <b class="t-lent">{fmtNumber(row.lent)}</b> · waiting <b>{row.waiting}</b> job{row.waiting === 1 ? '' : 's'}
      </div>
    </div>
  );
}

export function Overview({ api, queue }) {
  const { data, error } = usePoll(() => loadOverview(api, queue), [api, queue], 2000);
  const rows = data ? shareRows(data) : [];
  const scale = Math.max(1, ...rows.map((r) => Math.max(r.limit ?? 0, r.own + r.lent) + r.borrowed));
  const total = data?.snapshot?.queueUtilization?.totalCapacityUsage || [];
  const front = data?.snapshot?.frontOfQueue?.jobs || [];
  return (
    <Section title={`Queue ${queue}`} testid="overview">
      <Problem error={error} what={`the snapshot of ${queue}`} />
      {data?.sharesError && <Problem error={data.sharesError} what="the shares' limits" />}
      <div class="legend">
        <span class="seg own" /> own use <span class="seg lent" /> lent to others
        <span class="seg idle" /> idle <span class="seg borrowed" /> borrowed beyond the limit
        <span class="limit-key" /> limit
      </div>
      {rows.length === 0 && data && <p class="muted">This queue has no quota shares.</p>}
      {rows.map((r) => <Bar row={r} scale={scale} />)}
      {data && (
        <p class="muted small" data-testid="updated">
          In use: {total.map((t) => `${fmtNumber(t.quantity)} ${t.capacityUnit}`).join(', ') || 'nothing'}
          {' · '}{front.length} job{front.length === 1 ? '' : 's'} at the front of the queue
          {' · '}updated {fmtTime(data.snapshot?.queueUtilization?.lastUpdatedAt)}
        </p>
      )}
    </Section>
  );
}
