import { resolve } from 'node:path';
import type { Configuration } from '@rebound/core';
import { EtcdHaServices } from './etcd/etcd-ha-services.js';
import { FileHaServices } from './file/file-ha-services.js';
import type { HighAvailabilityServices } from './ha-services.js';

/**
 * The HA services `high-availability.type` names. `haDir` is the process's --ha-dir: the file
 * backend's lease and leader.json live there, and it is the default `high-availability.storageDir`.
 */
export function createHaServices(config: Configuration, haDir: string): HighAvailabilityServices {
  const storage = config.getString('high-availability.storageDir');
  const storageDir = storage ? resolve(haDir, storage) : haDir;
  return config.getString('high-availability.type') === 'etcd'
    ? new EtcdHaServices(storageDir, config)
    : new FileHaServices(haDir, storageDir, config);
}
