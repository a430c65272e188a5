import { describe, expect, it } from 'vitest';
import { httpPortFor } from './local.js';

describe('httpPortFor', () => {
  it('puts the JobMasters on 8081, 8082, ... and TaskManagers on any free port unless configured', () => {
    expect(httpPortFor('jobmaster', 'jm-1', {})).toEqual({ 'rest.port': '8081' });
    expect(httpPortFor('jobmaster', 'jm-2', {})).toEqual({ 'rest.port': '8082' });
    expect(httpPortFor('taskmanager', 'tm-3', {})).toEqual({ 'metrics.port': '0' });
    expect(httpPortFor('shuffle-worker', 'sw-2', {})).toEqual({ 'shuffle-worker.metrics.port': '0' });
    // A TaskManager's metrics.port is not a shuffle worker's.
    expect(httpPortFor('shuffle-worker', 'sw-2', { 'metrics.port': '9249' })).toEqual({
      'shuffle-worker.metrics.port': '0',
    });
    expect(httpPortFor('jobmaster', 'jm-2', { 'rest.port': '0' })).toEqual({ 'rest.port': '0' });
  });

  it('offsets a configured port by the daemon number, so a restarted daemon keeps its port', () => {
    expect(httpPortFor('jobmaster', 'jm-1', { 'rest.port': '8081' })).toEqual({ 'rest.port': '8081' });
    expect(httpPortFor('jobmaster', 'jm-3', { 'rest.port': '8081' })).toEqual({ 'rest.port': '8083' });
    expect(httpPortFor('taskmanager', 'tm-2', { 'metrics.port': '9249' })).toEqual({ 'metrics.port': '9250' });
    expect(httpPortFor('shuffle-worker', 'sw-3', { 'shuffle-worker.metrics.port': '9300' })).toEqual({
      'shuffle-worker.metrics.port': '9302',
    });
  });
});
