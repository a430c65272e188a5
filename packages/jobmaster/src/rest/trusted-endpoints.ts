import { isHttpEndpointUrl, type Logger } from '@rebound/core';
import type { EndpointRegistry, ProcessEndpoint } from '@rebound/ha';

/**
 * The endpoint registry as the REST server reads it: a record whose `restUrl` or `metricsUrl` is
 * not an http(s) URL with host and port is skipped and logged (once per record). Whoever can
 * write the HA store must not get a `javascript:` link into the dashboard, a redirect target of
 * their choosing or an allowed CORS origin.
 */
export function trustedEndpoints(registry: EndpointRegistry, logger: Logger): EndpointRegistry {
  const reported = new Set<string>();
  const check = (ep: ProcessEndpoint | undefined): ProcessEndpoint | undefined => {
    if (!ep) return undefined;
    const bad = (['restUrl', 'metricsUrl'] as const).find((k) => ep[k] !== undefined && !isHttpEndpointUrl(ep[k]));
    if (bad === undefined) return ep;
    const key = `${ep.id}\n${String(ep[bad])}`;
    if (!reported.has(key)) {
      reported.add(key);
      logger.warn(
        { endpointId: ep.id, field: bad, value: String(ep[bad]).slice(0, 200) },
        'refusing an endpoint record whose URL is not http(s)://host:port; the record is skipped',
      );
    }
    return undefined;
  };
  return {
    publish: (ep) => registry.publish(ep),
    withdraw: (id) => registry.withdraw(id),
    list: async () => (await registry.list()).flatMap((ep) => check(ep) ?? []),
    read: async (id) => check(await registry.read(id)),
    alive: (ep) => registry.alive(ep),
  };
}
