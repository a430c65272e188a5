#!/usr/bin/env node
// The `rebound` command: TypeScript sources run through tsx, no build step.
import { register } from 'tsx/esm/api';

register();
await import(new URL('../packages/cli/src/main.ts', import.meta.url).href);
