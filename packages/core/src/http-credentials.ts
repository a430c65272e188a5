/**
 * Parsers of what an HTTP request carries before it is authenticated. Each is total: it never
 * throws, whatever bytes a peer sends, and a value it cannot read counts as no credential (the
 * request is then refused with 401, never answered with a 500 or a dead process).
 */

/** Longest credential value looked at: a cluster secret or a session id is far shorter. */
const MAX_CREDENTIAL_LENGTH = 4096;

/** `decodeURIComponent` that answers undefined instead of throwing on a malformed escape. */
export function decodeComponent(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/** One string of a header value as Node hands it over (string, string[] or absent). */
function headerText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string').join('; ');
  return '';
}

function usable(value: string | undefined): string | undefined {
  return value !== undefined && value.length > 0 && value.length <= MAX_CREDENTIAL_LENGTH ? value : undefined;
}

/** The value of cookie `name` in a `Cookie` header (the first one; undefined if malformed). */
export function cookieValue(header: unknown, name: string): string | undefined {
  for (const part of headerText(header).split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    return usable(decodeComponent(part.slice(eq + 1).trim()));
  }
  return undefined;
}

/** The token of an `Authorization: Bearer <token>` header. */
export function bearerToken(header: unknown): string | undefined {
  const m = /^Bearer[ \t]+([^\s]+)[ \t]*$/i.exec(headerText(header));
  return m ? usable(m[1]) : undefined;
}

/** The path of a request target, without its query or fragment (what a log line may show). */
export function pathOf(url: unknown): string {
  if (typeof url !== 'string') return '/';
  const end = url.search(/[?#]/);
  return (end < 0 ? url : url.slice(0, end)).slice(0, 1024) || '/';
}

/** Query parameter `name` of a request target (URLSearchParams never throws on bad escapes). */
export function queryParam(url: unknown, name: string): string | undefined {
  if (typeof url !== 'string') return undefined;
  const q = url.indexOf('?');
  if (q < 0) return undefined;
  const hash = url.indexOf('#', q);
  return usable(new URLSearchParams(url.slice(q + 1, hash < 0 ? undefined : hash)).get(name) ?? undefined);
}

export interface HttpCredential {
  readonly secret: string;
  /** header: `Authorization: Bearer`; query: `?token=` (the printed dashboard link). */
  readonly via: 'header' | 'query';
}

/**
 * The cluster secret an HTTP request carries: `Authorization: Bearer` or a `token` query
 * parameter (how a browser opens the dashboard link `rebound local up` prints). A browser then
 * holds a session cookie (DashboardSessions), never the secret: no cookie is read here.
 */
export function httpCredentialOf(
  headers: { readonly authorization?: unknown; readonly [name: string]: unknown },
  url: unknown,
): HttpCredential | undefined {
  const bearer = bearerToken(headers.authorization);
  if (bearer !== undefined) return { secret: bearer, via: 'header' };
  const token = queryParam(url, 'token');
  return token !== undefined ? { secret: token, via: 'query' } : undefined;
}

/** http(s)://host:port with an optional trailing slash: a name, an IPv4 or a bracketed IPv6 host. */
const ENDPOINT_URL = /^https?:\/\/(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?):\d{1,5}\/?$/;

/**
 * Whether `text` is an endpoint URL another process may publish (e.g. a JobMaster's `restUrl`):
 * http or https with a host and an explicit port, and nothing else (no credentials, path, query
 * or fragment). `javascript:` links and malformed URLs are not.
 */
export function isHttpEndpointUrl(text: unknown): text is string {
  if (typeof text !== 'string' || !ENDPOINT_URL.test(text)) return false;
  try {
    const url = new URL(text);
    return Number(/:(\d+)\/?$/.exec(text)?.[1]) <= 65535 && url.hostname.length > 0;
  } catch {
    return false;
  }
}

/** The origin of an endpoint URL (isHttpEndpointUrl), or undefined. */
export function endpointOrigin(text: unknown): string | undefined {
  return isHttpEndpointUrl(text) ? new URL(text).origin : undefined;
}
