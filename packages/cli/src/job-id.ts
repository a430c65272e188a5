import { isJobId, JobNotFoundError } from '@rebound/core';

/** A job as the name lookup sees it. */
export interface NamedJob {
  readonly id: string;
  readonly name: string;
  readonly submittedAtMs: number;
}

/**
 * The job a user means by `given`: a full id, a unique prefix of at least 4 hex characters of one
 * of `known()`, or, when `named` is given and no id matches, a job's name: the newest job of that
 * name, which is the one just submitted (`rebound watch wordcount`). The same rule for every
 * command that takes a job id; lists are asked for only when the id is not a full one.
 */
export async function pickJobId(
  given: string,
  known: () => Promise<readonly string[]>,
  named?: () => Promise<readonly NamedJob[]>,
): Promise<string> {
  const id = given.trim().toLowerCase();
  if (isJobId(id)) return id;
  const isPrefix = /^[0-9a-f]{4,31}$/.test(id);
  if (isPrefix) {
    const matches = (await known()).filter((j) => j.startsWith(id));
    if (matches.length === 1) return matches[0]!;
    if (matches.length > 1)
      throw new JobNotFoundError(id, `${matches.length} jobs start with ${id}; give more characters of the id`);
  }
  if (named) {
    const name = given.trim();
    const newest = (await named()).filter((j) => j.name === name).sort((a, b) => b.submittedAtMs - a.submittedAtMs)[0];
    if (newest) return newest.id;
  }
  if (isPrefix) throw new JobNotFoundError(id, `no job id starts with ${id}; run 'rebound list' to see the jobs`);
  throw new JobNotFoundError(
    given,
    `'${given}' is not a job id (32 hex characters, or a unique prefix of at least 4)${named ? ' nor the name of a job' : ''}; run 'rebound list' to see the jobs`,
  );
}
