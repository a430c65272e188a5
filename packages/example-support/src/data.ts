import { fmix32 } from '@rebound/core/hash';

/**
 * Deterministic data of the examples, as pure functions of (seed, index): any split of a generated
 * source can be produced again after a failure, and tests compute expected results independently.
 */

/** The words of a line: maximal runs of Unicode letters or digits, lower-cased. */
export function wordsOf(line: string): string[] {
  return line.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** A uniformly spread 32-bit value for (seed, index, salt): murmur3's finalizer over the mix. */
export function random32(seed: number, index: number, salt: number): number {
  return fmix32(
    Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(index + 1, 0xc2b2ae35) ^ Math.imul(salt + 1, 0x27d4eb2f),
  );
}

/** An integer in [lo, hi]. */
function between(seed: number, index: number, salt: number, lo: number, hi: number): number {
  return lo + (random32(seed, index, salt) % (hi - lo + 1));
}

const DAY_MS = 86_400_000;
const EPOCH_1992 = Date.UTC(1992, 0, 1);
/** TPC-H: ship dates spread over 1992-01-02 .. 1998-12-01. */
const SHIP_DAYS = Math.round((Date.UTC(1998, 11, 1) - Date.UTC(1992, 0, 2)) / DAY_MS);
/** TPC-H: items shipped after this date are still open (O) and not returned (N). */
export const CURRENT_DATE = '1995-06-17';

export function isoDate(daysSince1992: number): string {
  return new Date(EPOCH_1992 + daysSince1992 * DAY_MS).toISOString().slice(0, 10);
}

/**
 * A TPC-H lineitem row, with money as integer cents and rates as integer percents so that sums
 * are exact whatever order the aggregation runs in.
 */
export interface LineItem {
  readonly orderkey: number;
  readonly quantity: number; // 1..50
  readonly extendedprice: number; // cents
  readonly discount: number; // percent 0..10
  readonly tax: number; // percent 0..8
  readonly returnflag: 'A' | 'N' | 'R';
  readonly linestatus: 'F' | 'O';
  readonly shipdate: string; // YYYY-MM-DD
}

export function lineItem(seed: number, i: number): LineItem {
  const quantity = between(seed, i, 1, 1, 50);
  const partPrice = between(seed, i, 2, 90_000, 200_000); // cents
  const shipDay = 1 + between(seed, i, 3, 0, SHIP_DAYS);
  const shipdate = isoDate(shipDay);
  // TPC-H: the return flag depends on the receipt date (1..30 days after shipping), the line
  // status on the ship date, so a few items shipped before CURRENT_DATE are still N(ot returned).
  const received = isoDate(shipDay + between(seed, i, 7, 1, 30)) <= CURRENT_DATE;
  const shipped = shipdate <= CURRENT_DATE;
  return {
    orderkey: Math.floor(i / 4) + 1,
    quantity,
    extendedprice: quantity * partPrice,
    discount: between(seed, i, 4, 0, 10),
    tax: between(seed, i, 5, 0, 8),
    returnflag: received ? (between(seed, i, 6, 0, 1) === 0 ? 'R' : 'A') : 'N',
    linestatus: shipped ? 'F' : 'O',
    shipdate,
  };
}

export interface Customer {
  readonly custkey: number;
  readonly name: string;
  readonly nation: string;
}

export interface Order {
  readonly orderkey: number;
  readonly custkey: number;
  readonly totalprice: number; // cents
}

const NATIONS = [
  'ALGERIA',
  'ARGENTINA',
  'BRAZIL',
  'CANADA',
  'EGYPT',
  'ETHIOPIA',
  'FRANCE',
  'GERMANY',
  'INDIA',
  'INDONESIA',
  'IRAN',
  'IRAQ',
  'JAPAN',
  'JORDAN',
  'KENYA',
  'MOROCCO',
  'MOZAMBIQUE',
  'PERU',
  'CHINA',
  'ROMANIA',
  'SAUDI ARABIA',
  'VIETNAM',
  'RUSSIA',
  'UNITED KINGDOM',
  'UNITED STATES',
];

/** Customer i has custkey i (0 .. customers-1). */
export function customer(seed: number, i: number): Customer {
  return {
    custkey: i,
    name: `Customer#${String(i).padStart(9, '0')}`,
    nation: NATIONS[random32(seed, i, 11) % NATIONS.length]!,
  };
}

/**
 * Order i references a customer key in [0, customers * 1.1): about one order in eleven has no
 * customer and drops out of the inner join.
 */
export function order(seed: number, i: number, customers: number): Order {
  const keySpace = customers + Math.floor(customers / 10);
  return {
    orderkey: i + 1,
    custkey: keySpace > 0 ? random32(seed, i, 12) % keySpace : 0,
    totalprice: between(seed, i, 13, 100, 50_000_000),
  };
}
