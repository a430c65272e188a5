import { readFileSync, statSync } from 'node:fs';
import { timingSafeEqual } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import type { Configuration } from './config.js';
import { DashboardSessions } from './dashboard-session.js';
import { ConfigError, toServiceError, UnauthenticatedError } from './errors.js';

/** gRPC metadata key of the cluster secret (lower case: HTTP/2 header names are). */
export const AUTH_METADATA_KEY = 'rebound-auth';

/**
 * Health checks answer anyone: a container runtime probes readiness without the cluster secret,
 * and SERVING/NOT_SERVING tells nothing a port scan does not.
 */
const UNAUTHENTICATED_SERVICES = ['/grpc.health.v1.Health/'];

/** A secret shorter than this is refused: `rebound local up` writes 32 random bytes as hex. */
const MIN_SECRET_LENGTH = 16;

function readSecret(path: string): string {
  let text: string;
  try {
    if ((statSync(path).mode & 0o077) !== 0) {
      throw new ConfigError(`security.auth.token-file: ${path} is readable by other users; chmod 600 it`);
    }
    text = readFileSync(path, 'utf8').trim();
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(
      `security.auth.token-file: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? String(err)}); point it at the cluster's secret file`,
    );
  }
  if (text.length < MIN_SECRET_LENGTH) {
    throw new ConfigError(
      `security.auth.token-file: ${path} holds a secret of ${text.length} characters; use at least ${MIN_SECRET_LENGTH} (e.g. openssl rand -hex 32)`,
    );
  }
  return text;
}

function readPem(key: string, path: string): Buffer {
  if (!path)
    throw new ConfigError(
      `${key} is not set; security.ssl.internal.enabled needs cert, key and ca (scripts/make-certs.sh makes them)`,
    );
  try {
    return readFileSync(path);
  } catch (err) {
    throw new ConfigError(`${key}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

const BY_CONFIG = new WeakMap<Configuration, ClusterSecurity>();

interface Tls {
  readonly ca: Buffer;
  readonly cert: Buffer;
  readonly key: Buffer;
}

/**
 * How this process authenticates the cluster's RPCs, from `security.auth.token-file` (a shared
 * secret every call carries and every server checks before any handler runs) and, optionally,
 * `security.ssl.internal.*` (mutual TLS with a cluster CA). Built once per process.
 */
export class ClusterSecurity {
  private constructor(
    private readonly secret: string | undefined,
    private readonly tls: Tls | undefined,
  ) {}

  /** The security of `config`, read once per Configuration instance (the files are read then). */
  static of(config: Configuration): ClusterSecurity {
    let s = BY_CONFIG.get(config);
    if (!s) {
      s = ClusterSecurity.fromConfig(config);
      BY_CONFIG.set(config, s);
    }
    return s;
  }

  static fromConfig(config: Configuration): ClusterSecurity {
    const tokenFile = config.getString('security.auth.token-file');
    const secret = tokenFile ? readSecret(tokenFile) : undefined;
    const tls = config.getBoolean('security.ssl.internal.enabled')
      ? {
          ca: readPem('security.ssl.internal.ca', config.getString('security.ssl.internal.ca')),
          cert: readPem('security.ssl.internal.cert', config.getString('security.ssl.internal.cert')),
          key: readPem('security.ssl.internal.key', config.getString('security.ssl.internal.key')),
        }
      : undefined;
    return new ClusterSecurity(secret, tls);
  }

  /** No secret, no TLS: what unit tests of single components use. */
  static none(): ClusterSecurity {
    return new ClusterSecurity(undefined, undefined);
  }

  get authenticated(): boolean {
    return this.secret !== undefined;
  }

  /** Whether `given` opens this cluster: always without a secret, else only the secret itself. */
  accepts(given: string | undefined): boolean {
    return this.secret === undefined || (given !== undefined && sameSecret(given, this.secret));
  }

  /** Dashboard sessions signed with a key derived from the secret (undefined without a secret). */
  dashboardSessions(ttlMs: number): DashboardSessions | undefined {
    return this.secret === undefined ? undefined : new DashboardSessions(this.secret, ttlMs);
  }

  /** `?token=<secret>` for the dashboard link a person opens ('' without a secret). */
  dashboardQuery(): string {
    return this.secret === undefined ? '' : `?token=${encodeURIComponent(this.secret)}`;
  }

  /** Headers an HTTP client of the REST API or /metrics sends (Prometheus: bearer token). */
  httpHeaders(): Record<string, string> {
    return this.secret === undefined ? {} : { authorization: `Bearer ${this.secret}` };
  }

  /** Options for `new grpc.Server(...)`: the interceptor that refuses calls without the secret. */
  serverOptions(base: grpc.ServerOptions = {}): grpc.ServerOptions {
    const secret = this.secret;
    if (secret === undefined) return base;
    const check: grpc.ServerInterceptor = (method, call) => {
      if (UNAUTHENTICATED_SERVICES.some((prefix) => method.path.startsWith(prefix)))
        return new grpc.ServerInterceptingCall(call);
      const listener = new grpc.ServerListenerBuilder()
        .withOnReceiveMetadata((metadata, next) => {
          const given = metadata.get(AUTH_METADATA_KEY)[0];
          if (typeof given === 'string' && sameSecret(given, secret)) {
            metadata.remove(AUTH_METADATA_KEY);
            next(metadata);
            return;
          }
          const refused = toServiceError(
            new UnauthenticatedError(
              `${method.path} refused: the call carries ${given === undefined ? 'no' : 'a wrong'} cluster secret; set security.auth.token-file to the cluster's secret file`,
            ),
          );
          call.sendStatus({
            code: refused.code ?? grpc.status.UNAUTHENTICATED,
            details: refused.details ?? 'unauthenticated',
            metadata: refused.metadata ?? new grpc.Metadata(),
          });
        })
        .build();
      return new grpc.ServerInterceptingCall(
        call,
        new grpc.ResponderBuilder().withStart((next) => next(listener)).build(),
      );
    };
    return { ...base, interceptors: [...(base.interceptors ?? []), check] };
  }

  serverCredentials(): grpc.ServerCredentials {
    if (!this.tls) return grpc.ServerCredentials.createInsecure();
    return grpc.ServerCredentials.createSsl(
      this.tls.ca,
      [{ private_key: this.tls.key, cert_chain: this.tls.cert }],
      true,
    );
  }

  channelCredentials(): grpc.ChannelCredentials {
    if (!this.tls) return grpc.credentials.createInsecure();
    return grpc.credentials.createSsl(this.tls.ca, this.tls.key, this.tls.cert);
  }

  /** Client options: the interceptor that adds the secret to every call. */
  channelOptions(base: grpc.ClientOptions = {}): grpc.ClientOptions {
    const secret = this.secret;
    if (secret === undefined) return base;
    const addSecret: grpc.Interceptor = (options, nextCall) =>
      new grpc.InterceptingCall(nextCall(options), {
        start: (metadata, listener, next) => {
          metadata.set(AUTH_METADATA_KEY, secret);
          next(metadata, listener);
        },
      });
    return { ...base, interceptors: [...(base.interceptors ?? []), addSecret] };
  }
}
