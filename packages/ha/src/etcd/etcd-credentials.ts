import { readFileSync, statSync } from 'node:fs';
import type { IOptions } from 'etcd3';
import {
  type Configuration,
  ConfigError,
  PermissionDeniedError,
  type ReboundError,
  UnauthenticatedError,
  UnavailableError,
  errorMessage,
} from '@rebound/core';

/**
 * What a process shows etcd: a user and password (`high-availability.etcd.username`,
 * `password-file`) and TLS (`high-availability.etcd.tls.{ca,cert,key}-file`), read once at start
 * so that a missing or unreadable file is one line naming its key, before any call.
 */
export interface EtcdCredentials {
  readonly auth?: { readonly username: string; readonly password: string };
  readonly tls?: { readonly ca?: Buffer; readonly cert?: Buffer; readonly key?: Buffer };
}

const KEYS = {
  username: 'high-availability.etcd.username',
  passwordFile: 'high-availability.etcd.password-file',
  ca: 'high-availability.etcd.tls.ca-file',
  cert: 'high-availability.etcd.tls.cert-file',
  key: 'high-availability.etcd.tls.key-file',
} as const;

function readKeyFile(key: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new ConfigError(
      `${key}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? errorMessage(err)}); point it at a readable file`,
    );
  }
}

function readPassword(path: string): string {
  let mode: number;
  try {
    mode = statSync(path).mode;
  } catch (err) {
    throw new ConfigError(
      `${KEYS.passwordFile}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? errorMessage(err)}); point it at the file with the etcd password of ${KEYS.username}`,
    );
  }
  if ((mode & 0o077) !== 0)
    throw new ConfigError(`${KEYS.passwordFile}: ${path} is readable by other users; chmod 600 it`);
  // One line of text; the newline an editor or `echo` leaves is not part of the password.
  const password = readKeyFile(KEYS.passwordFile, path)
    .toString('utf8')
    .replace(/\r?\n$/, '');
  if (password.length === 0)
    throw new ConfigError(`${KEYS.passwordFile}: ${path} is empty; write the etcd password into it`);
  return password;
}

export function etcdCredentialsFrom(config: Configuration, endpoints: readonly string[]): EtcdCredentials {
  const username = config.getString(KEYS.username);
  const passwordFile = config.getString(KEYS.passwordFile);
  if (username !== '' && passwordFile === '')
    throw new ConfigError(
      `${KEYS.username} is set but ${KEYS.passwordFile} is not; set it to a file holding the password`,
    );
  if (username === '' && passwordFile !== '')
    throw new ConfigError(`${KEYS.passwordFile} is set but ${KEYS.username} is not; set the etcd user it belongs to`);
  const caFile = config.getString(KEYS.ca);
  const certFile = config.getString(KEYS.cert);
  const keyFile = config.getString(KEYS.key);
  if ((certFile === '') !== (keyFile === ''))
    throw new ConfigError(
      `${certFile === '' ? KEYS.key : KEYS.cert} is set but ${certFile === '' ? KEYS.cert : KEYS.key} is not; a client certificate needs both`,
    );
  const wantsTls = caFile !== '' || certFile !== '';
  const plain = endpoints.find((e) => !e.startsWith('https://'));
  if (wantsTls && plain !== undefined)
    throw new ConfigError(
      `${caFile !== '' ? KEYS.ca : KEYS.cert} is set but the etcd endpoint ${plain} is not https://; use https:// in high-availability.etcd.endpoints`,
    );
  return {
    ...(username !== '' ? { auth: { username, password: readPassword(passwordFile) } } : {}),
    ...(wantsTls
      ? {
          tls: {
            ...(caFile !== '' ? { ca: readKeyFile(KEYS.ca, caFile) } : {}),
            ...(certFile !== '' ? { cert: readKeyFile(KEYS.cert, certFile), key: readKeyFile(KEYS.key, keyFile) } : {}),
          },
        }
      : {}),
  };
}

/** The etcd3 client options for `credentials`: https:// endpoints without files use the system CAs. */
export function etcdClientOptions(credentials: EtcdCredentials): Pick<IOptions, 'auth' | 'credentials'> {
  const { auth, tls } = credentials;
  return {
    ...(auth ? { auth: { username: auth.username, password: auth.password } } : {}),
    ...(tls
      ? {
          credentials: {
            // grpc's createSsl takes null for "the system's CAs"; etcd3's type says Buffer only.
            rootCertificate: tls.ca ?? (null as unknown as Buffer),
            ...(tls.cert ? { certChain: tls.cert } : {}),
            ...(tls.key ? { privateKey: tls.key } : {}),
          },
        }
      : {}),
  };
}

/**
 * A refusal by etcd that no retry can fix, in one line naming the key to fix, or undefined for
 * anything else (which the caller reports as etcd being unavailable).
 */
export function etcdRefusal(
  err: unknown,
  endpoints: readonly string[],
  credentials: EtcdCredentials,
): ReboundError | undefined {
  const message = errorMessage(err);
  const at = `etcd ${endpoints.join(',')}`;
  const user = credentials.auth?.username;
  if (/authentication failed, invalid user ID or password/.test(message))
    return new UnauthenticatedError(
      `${at} refused user '${user ?? ''}': wrong password or unknown user; fix ${KEYS.passwordFile} or ${KEYS.username}`,
    );
  if (/user name is empty|user name not found|invalid auth token/.test(message) && user === undefined)
    return new UnauthenticatedError(
      `${at} requires authentication (${message.split('\n')[0]}); set ${KEYS.username} and ${KEYS.passwordFile}`,
    );
  if (/permission denied/.test(message))
    return new PermissionDeniedError(
      `${at} denied user '${user ?? ''}' access to the cluster's keys; grant its role readwrite on the prefix /<high-availability.cluster-id>/`,
    );
  if (/certificate|self[- ]signed|SSL|TLS|handshake|wrong version number/i.test(message))
    return new UnavailableError(
      `TLS to ${at} failed (${message.split('\n')[0]}); set ${KEYS.ca} to the CA that signed etcd's certificate${credentials.tls?.cert ? '' : `, and ${KEYS.cert}/${KEYS.key} if etcd requires client certificates`}`,
    );
  return undefined;
}
