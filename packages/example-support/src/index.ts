export * from './args.js';
export * from './data.js';
export * from './tpch-csv.js';
export * from './reference.js';
