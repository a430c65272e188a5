export * from './args.js';
export * from './data.js';
