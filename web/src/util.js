import { useEffect, useRef, useState } from 'preact/hooks';

// Calls `load` now and every `intervalMs` (0: once) while the component is shown and `deps` are
// unchanged; one call at a time. Returns { data, error, loading, reload }.
export function usePoll(load, deps, intervalMs = 2000) {
  const [state, setState] = useState({ data: null, error: null, loading: true });
  const tick = useRef(0);
  const [nonce, setNonce] = useState(0);
  useEffect(() => {
    let stopped = false;
    let timer = null;
    const me = ++tick.current;
    setState((s) => ({ ...s, loading: true }));
    const run = async () => {
      try {
        const data = await load();
        if (!stopped && me === tick.current) setState({ data, error: null, loading: false });
      } catch (error) {
        if (!stopped && me === tick.current) setState((s) => ({ data: s.data, error, loading: false }));
      }
      if (!stopped && intervalMs > 0) timer = setTimeout(run, intervalMs);
    };
    run();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [...deps, nonce]);
  return { ...state, reload: () => setNonce((n) => n + 1) };
}

export function fmtTime(ms) {
  if (!ms) return '';
  const d = new Date(ms);
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

export function fmtDuration(ms) {
  if (ms == null || ms < 0) return '';
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  const h = Math.floor(m / 60);
  return `${h}h${String(m % 60).padStart(2, '0')}m`;
}

export function fmtNumber(x) {
  if (x == null) return '';
  return Number.isInteger(x) ? String(x) : x.toFixed(2).replace(/\.?0+$/, '');
}

// The quantity of `unit` in an AWS capacity list ([{capacityUnit, quantity|maxCapacity}]).
export function quantityOf(list, unit, field = 'quantity') {
  const e = (list || []).find((x) => x.capacityUnit === unit);
  return e ? Number(e[field] || 0) : 0;
}

export const TERMINAL = new Set(['SUCCEEDED', 'FAILED']);

export const STATUSES = ['SUBMITTED', 'PENDING', 'RUNNABLE', 'SCHEDULED', 'STARTING', 'RUNNING', 'SUCCEEDED', 'FAILED'];

export function jobIdOf(arnOrId) {
  const i = (arnOrId || '').lastIndexOf('/');
  return i >= 0 ? arnOrId.slice(i + 1) : arnOrId;
}
