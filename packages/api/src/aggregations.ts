import { jobInvalid, userCodeError } from './errors.js';

/**
 * Named aggregations of `groupBy(key).aggregate({ total: sum('amount'), n: count() })`, with SQL's
 * null rules: sum, avg, min and max skip null (and missing) fields and are null when a group has
 * none; count() counts rows, count(field) the rows where the field is not null.
 */
export interface AggregateFunction {
  readonly fn: 'sum' | 'count' | 'avg' | 'min' | 'max';
  readonly field?: string;
}

function spec(fn: AggregateFunction['fn'], field: unknown): AggregateFunction {
  if (typeof field !== 'string' || field === '') throw jobInvalid(`${fn}(field): field must be a property name`);
  return { fn, field };
}

export const sum = (field: string): AggregateFunction => spec('sum', field);
export const avg = (field: string): AggregateFunction => spec('avg', field);
export const min = (field: string): AggregateFunction => spec('min', field);
export const max = (field: string): AggregateFunction => spec('max', field);
export const count = (field?: string): AggregateFunction =>
  field === undefined ? { fn: 'count' } : spec('count', field);

export type AggregateSpecs = { readonly [name: string]: AggregateFunction };

/** Per-group state: one JSON value per aggregate, in spec order (avg: [sum, n]). */
export type AggregateState = unknown[];

export interface CompiledAggregation {
  /** State of one record. */
  init(record: unknown): AggregateState;
  /** Folds `other` into `state`. */
  merge(state: AggregateState, other: AggregateState): void;
  copy(state: AggregateState): AggregateState;
  finish(state: AggregateState): { [name: string]: unknown };
}

function fieldOf(record: unknown, field: string): unknown {
  const v = (record as { [k: string]: unknown } | null)?.[field];
  return v === undefined ? null : v;
}

function numeric(v: unknown, f: AggregateFunction): number | null {
  if (v === null) return null;
  if (typeof v !== 'number') {
    throw userCodeError(`${f.fn}(${JSON.stringify(f.field)}): field value ${JSON.stringify(v)} is not a number`);
  }
  return v;
}

function comparable(v: unknown, f: AggregateFunction): unknown {
  if (v === null || typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean') return v;
  throw userCodeError(`${f.fn}(${JSON.stringify(f.field)}): field value ${JSON.stringify(v)} cannot be ordered`);
}

export function compileAggregation(specs: AggregateSpecs): CompiledAggregation {
  if (typeof specs !== 'object' || specs === null) throw jobInvalid('aggregate(specs): specs must be an object');
  const entries = Object.entries(specs);
  if (entries.length === 0) throw jobInvalid('aggregate(specs): name at least one aggregate');
  for (const [name, f] of entries) {
    if (!f || !['sum', 'count', 'avg', 'min', 'max'].includes(f.fn)) {
      throw jobInvalid(`aggregate(specs): '${name}' must be sum(field), count(), avg(field), min(field) or max(field)`);
    }
  }
  const fns = entries.map(([, f]) => f);
  return {
    // Per record of the grouped input: a loop rather than fns.map and its closure.
    init(record) {
      const state: AggregateState = new Array(fns.length);
      for (let i = 0; i < fns.length; i++) {
        const f = fns[i]!;
        const v = f.field === undefined ? null : fieldOf(record, f.field);
        switch (f.fn) {
          case 'count':
            state[i] = f.field === undefined || v !== null ? 1 : 0;
            break;
          case 'sum':
            state[i] = numeric(v, f);
            break;
          case 'avg': {
            const n = numeric(v, f);
            state[i] = n === null ? [0, 0] : [n, 1];
            break;
          }
          default:
            state[i] = comparable(v, f);
        }
      }
      return state;
    },
    merge(state, other) {
      for (let i = 0; i < fns.length; i++) {
        const a = state[i];
        const b = other[i];
        switch (fns[i]!.fn) {
          case 'count':
            state[i] = (a as number) + (b as number);
            break;
          case 'sum':
            state[i] = b === null ? a : a === null ? b : (a as number) + (b as number);
            break;
          case 'avg': {
            // In place: a state's [sum, n] is its own (init and copy make new ones).
            const sn = a as [number, number];
            const sn2 = b as [number, number];
            sn[0] += sn2[0];
            sn[1] += sn2[1];
            break;
          }
          case 'min':
            if (a === null || (b !== null && (b as number) < (a as number))) state[i] = b;
            break;
          case 'max':
            if (a === null || (b !== null && (b as number) > (a as number))) state[i] = b;
            break;
        }
      }
    },
    copy(state) {
      return state.map((s) => (Array.isArray(s) ? s.slice() : s));
    },
    finish(state) {
      const out: { [name: string]: unknown } = {};
      entries.forEach(([name, f], i) => {
        if (f.fn === 'avg') {
          const [s, n] = state[i] as [number, number];
          out[name] = n === 0 ? null : s / n;
        } else {
          out[name] = state[i];
        }
      });
      return out;
    },
  };
}
