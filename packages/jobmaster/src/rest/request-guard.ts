import { isIP } from 'node:net';

/** The host name of a `Host` header (lower case, without port or IPv6 brackets); undefined if malformed. */
export function hostNameOf(header: unknown): string | undefined {
  if (typeof header !== 'string' || header.length === 0 || header.length > 300) return undefined;
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+))(?::\d{1,5})?$/.exec(header);
  if (!m) return undefined;
  return (m[1] ?? m[2]!).toLowerCase();
}

/**
 * Whether a request's `Host` names this server: an IP address, `localhost`, or one of `names`
 * (the advertised and bound host names). A DNS-rebinding page reaches the server under its own
 * domain name and is refused, whatever the address that name resolved to.
 */
export function hostAllowed(header: unknown, names: ReadonlySet<string>): boolean {
  if (header === undefined) return true; // HTTP/1.0 without Host: not a browser
  const name = hostNameOf(header);
  if (name === undefined) return false;
  return isIP(name) !== 0 || name === 'localhost' || names.has(name);
}
