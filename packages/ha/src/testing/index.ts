export {
  startEtcdCluster,
  etcdAvailable,
  DEFAULT_ETCD_BINARY,
  type EtcdCluster,
  type EtcdClusterOptions,
  type EtcdMember,
} from './etcd-cluster.js';
export type { EtcdTestUser, EtcdTlsFiles } from './etcd-security.js';
