import { describe, expect, it } from 'vitest';
import { recoveryOutcome } from './recovery-text.js';
import { recovery } from './testing/fixtures.js';

describe('recoveryOutcome', () => {
  it('says where reused partitions were found when shuffle workers kept some', () => {
    const r = recovery({
      executions_recovered: 15,
      partitions_reused: 15,
      partition_bytes_reused: 2048,
      partitions_reused_on_shuffle_workers: 12,
    });
    expect(recoveryOutcome(r)).toBe(
      '15 finished tasks kept with 15 partitions (2.0 KiB) reused (12 kept on shuffle workers, 3 on TaskManagers); no finished work lost',
    );
    expect(recoveryOutcome({ ...r, partitions_reused_on_shuffle_workers: 15 })).toContain(
      'reused (15 kept on shuffle workers);',
    );
    expect(recoveryOutcome({ ...r, partitions_reused_on_shuffle_workers: 0 })).toContain('reused; no finished');
  });
});
