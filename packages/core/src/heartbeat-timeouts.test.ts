import { describe, expect, it } from 'vitest';
import { HeartbeatTimeouts } from './heartbeat-timeouts.js';
import { silentLogger } from './logger.js';

describe('HeartbeatTimeouts', () => {
  function setUp() {
    const clock = { t: 0, now: () => clock.t };
    const timeouts = new HeartbeatTimeouts({ timeoutMs: 3_000, checkIntervalMs: 200, clock, logger: silentLogger() });
    const peers = [
      { id: 'tm-1', lastHeartbeatMs: 0 },
      { id: 'tm-2', lastHeartbeatMs: 0 },
    ];
    return { clock, timeouts, peers };
  }

  it('finds a peer silent for longer than the timeout while this process runs on time', () => {
    const { clock, timeouts, peers } = setUp();
    for (clock.t = 0; clock.t <= 3_000; clock.t += 200) {
      peers[1]!.lastHeartbeatMs = clock.t;
      expect(timeouts.expired(peers)).toEqual([]);
    }
    clock.t += 200;
    peers[1]!.lastHeartbeatMs = clock.t;
    expect(timeouts.expired(peers)).toEqual([{ peer: peers[0], silentMs: 3_400 }]);
  });

  it('does not count its own stall: a JobMaster resumed after 9 s declares nobody lost', () => {
    const { clock, timeouts, peers } = setUp();
    clock.t = 1_000;
    expect(timeouts.expired(peers)).toEqual([]);
    // SIGSTOPped: the next check comes 9 s late, before the peers' queued heartbeats are read.
    clock.t += 9_000;
    expect(timeouts.expired(peers)).toEqual([]);
    // tm-2's heartbeats arrive; tm-1 is really gone and is found once it has been silent for the
    // timeout, not counting the stall: 1.2 s before it, then 1.8 s after.
    for (let i = 0; i < 9; i++) {
      clock.t += 200;
      peers[1]!.lastHeartbeatMs = clock.t;
      expect(timeouts.expired(peers).map((x) => x.peer.id)).toEqual([]);
    }
    clock.t += 200;
    peers[1]!.lastHeartbeatMs = clock.t;
    expect(timeouts.expired(peers).map((x) => x.peer.id)).toEqual(['tm-1']);
  });
});
