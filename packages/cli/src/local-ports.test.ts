import { describe, expect, it } from 'vitest';
import { httpPortFor } from './local.js';

describe('httpPortFor', () => {
  it('gives every daemon any free port unless the cluster configuration names one', () => {
    expect(httpPortFor('jobmaster', 'jm-1', {})).toEqual({ 'rest.port': '0' });
    expect(httpPortFor('taskmanager', 'tm-3', {})).toEqual({ 'metrics.port': '0' });
    expect(httpPortFor('jobmaster', 'jm-2', { 'rest.port': '0' })).toEqual({ 'rest.port': '0' });
  });

  it('offsets a configured port by the daemon number, so a restarted daemon keeps its port', () => {
    expect(httpPortFor('jobmaster', 'jm-1', { 'rest.port': '8081' })).toEqual({ 'rest.port': '8081' });
    expect(httpPortFor('jobmaster', 'jm-3', { 'rest.port': '8081' })).toEqual({ 'rest.port': '8083' });
    expect(httpPortFor('taskmanager', 'tm-2', { 'metrics.port': '9249' })).toEqual({ 'metrics.port': '9250' });
  });
});
