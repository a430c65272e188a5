export * from './args.js';
export * from './data.js';
export * from './tpch-csv.js';
