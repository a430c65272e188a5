import { createHash } from 'node:crypto';
import { mkdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic, JobModuleInvalidError } from '@rebound/core';
import { buildOperators, loadJobModule, type Transformation } from '@rebound/api';

/**
 * Job modules fetched from the JobMaster, cached on disk by digest, and the operators built from
 * them, cached per (digest, job arguments).
 */
export class ModuleCache {
  private readonly built = new Map<string, Promise<ReadonlyMap<string, Transformation>>>();

  constructor(private readonly dir: string) {}

  operators(
    digest: string,
    args: readonly string[],
    cwd: string,
    fetch: () => Promise<{ bytes: Uint8Array; digest: string }>,
  ): Promise<ReadonlyMap<string, Transformation>> {
    const key = `${digest}\u0000${cwd}\u0000${JSON.stringify(args)}`;
    let p = this.built.get(key);
    if (!p) {
      p = this.load(digest, args, cwd, fetch);
      this.built.set(key, p);
      p.catch(() => this.built.delete(key));
    }
    return p;
  }

  private async load(
    digest: string,
    args: readonly string[],
    cwd: string,
    fetch: () => Promise<{ bytes: Uint8Array; digest: string }>,
  ): Promise<ReadonlyMap<string, Transformation>> {
    if (!/^[0-9a-f]{64}$/.test(digest)) throw new JobModuleInvalidError(`bad module digest '${digest}'`);
    const path = join(this.dir, `${digest}.mjs`);
    if (!(await stat(path).catch(() => undefined))) {
      const { bytes } = await fetch();
      const actual = createHash('sha256').update(bytes).digest('hex');
      if (actual !== digest) {
        throw new JobModuleInvalidError(`job module digest mismatch: expected ${digest}, got ${actual}`);
      }
      await mkdir(this.dir, { recursive: true });
      await writeFileAtomic(path, bytes);
    } else {
      // A cached file is trusted only if it still has the digest it is named by.
      const actual = createHash('sha256')
        .update(await readFile(path))
        .digest('hex');
      if (actual !== digest) throw new JobModuleInvalidError(`cached job module ${path} is corrupt`);
    }
    const def = await loadJobModule(path);
    return buildOperators(def, [...args], { cwd: cwd || undefined });
  }
}
