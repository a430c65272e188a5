import { existsSync } from 'node:fs';
import { chromium, type BrowserContext } from 'playwright-core';
import { makeTempDir } from './util.js';

/** An installed chromium (REBOUND_CHROMIUM names another); browser tests skip cleanly without it (nothing ever downloads a browser). */
export const CHROMIUM = process.env.REBOUND_CHROMIUM ?? '/usr/bin/chromium';
export const HAVE_CHROMIUM = existsSync(CHROMIUM);

/** A headless chromium with a fresh profile and no background traffic (only loopback is visited). */
export async function launchBrowser(): Promise<BrowserContext> {
  const profile = await makeTempDir('rebound-chromium-');
  return chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1400, height: 1000 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
