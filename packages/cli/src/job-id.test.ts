import { describe, expect, it } from 'vitest';
import { pickJobId } from './job-id.js';

const a = 'abcd'.padEnd(32, '0');
const b = 'abce'.padEnd(32, '1');

describe('pickJobId', () => {
  it('takes a full id without asking, and a unique prefix of at least 4', async () => {
    const none = (): Promise<string[]> => Promise.reject(new Error('not asked'));
    expect(await pickJobId(a.toUpperCase(), none)).toBe(a);
    expect(await pickJobId('abcd', async () => [a, b])).toBe(a);
  });

  it('names what is wrong with a prefix', async () => {
    await expect(pickJobId('abc', async () => [a])).rejects.toThrow(/not a job id .* at least 4/);
    await expect(pickJobId('abc9', async () => [a])).rejects.toThrow('no job id starts with abc9');
    await expect(pickJobId('abc', async () => [a, b])).rejects.toThrow(/not a job id/);
    await expect(pickJobId('ab', async () => [a, b])).rejects.toThrow(/not a job id/);
  });

  it('asks for more characters when several jobs match', async () => {
    const c = 'abcd'.padEnd(32, '2');
    await expect(pickJobId('abcd', async () => [a, c])).rejects.toThrow('2 jobs start with abcd; give more');
  });

  it('takes the name of a job when no id matches: the newest job of that name', async () => {
    const jobs = [
      { id: a, name: 'wordcount', submittedAtMs: 1 },
      { id: b, name: 'wordcount', submittedAtMs: 2 },
      { id: 'beef'.padEnd(32, '3'), name: 'q1', submittedAtMs: 3 },
    ];
    const ids = async (): Promise<string[]> => jobs.map((j) => j.id);
    expect(await pickJobId('wordcount', ids, async () => jobs)).toBe(b);
    expect(await pickJobId('q1', ids, async () => jobs)).toBe(jobs[2]!.id);
    // A hex prefix that matches an id wins over a name.
    expect(await pickJobId('abcd', ids, async () => jobs)).toBe(a);
    await expect(pickJobId('nosuch', ids, async () => jobs)).rejects.toThrow(/not a job id .* nor the name of a job/);
  });
});
