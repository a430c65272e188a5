#!/usr/bin/env node
// Entry point of the compose `etcd` service (docker-compose.etcd.yml): secures the member before
// anything else can talk to it, so the compose network never sees an open etcd.
//
//   node scripts/docker/etcd.mjs ETCD_BINARY ETCD_ARGS...
//
// 1. At the first start, makes a CA, the member's certificate and a client certificate, and
//    random passwords for etcd's `root` and `rebound` users, with node's crypto only: the image
//    need not have openssl, and nothing comes from the network. The paths are the member's own
//    --trusted-ca-file, --cert-file and --key-file, and the client's high-availability.etcd.*
//    keys of $REBOUND_PROPERTIES (the files the daemons read from the shared volume). The CA key
//    and root's password ($REBOUND_ETCD_ROOT_PASSWORD_FILE) stay with the member. Files are 0600.
// 2. Runs etcd with ETCD_ARGS, passing SIGTERM/SIGINT on, and exits as it exits.
// 3. Once it answers and unless already done: user `root` (role root), user `rebound` with a role
//    `rebound` limited to readwrite on /<high-availability.cluster-id>/, then auth enable. Through
//    etcd's JSON gateway, so no etcdctl is needed either.
//
// The client certificate has no CN (its subject is an O): with --client-cert-auth etcd takes a
// CN as the user of a request that carries no token, so a certificate alone must name nobody; and
// with auth on, etcd's JSON gateway refuses client certificates that have a CN.
import { spawn } from 'node:child_process';
import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { dirname, join } from 'node:path';
import { properties } from './rebound-properties.mjs';

const CLIENT_O = 'rebound compose etcd client';
const VALID_DAYS = 825;

function say(line) {
  process.stderr.write(`etcd-init: ${line}\n`);
}

function die(line) {
  say(line);
  process.exit(1);
}

// --- a minimal DER encoder: just what an X.509 v3 certificate with ECDSA needs ---

function tlv(tag, ...parts) {
  const body = Buffer.concat(parts);
  const n = body.length;
  const len = n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff]);
  return Buffer.concat([Buffer.from([tag]), len, body]);
}
const seq = (...parts) => tlv(0x30, ...parts);
const octets = (buf) => tlv(0x04, buf);
const bits = (buf, unused = 0) => tlv(0x03, Buffer.from([unused]), buf);
function oid(dotted) {
  const [a, b, ...rest] = dotted.split('.').map(Number);
  const out = [40 * a + b];
  for (const n of rest) {
    const groups = [n & 0x7f];
    for (let v = n >> 7; v > 0; v >>= 7) groups.unshift((v & 0x7f) | 0x80);
    out.push(...groups);
  }
  return tlv(0x06, Buffer.from(out));
}
/** A Name of one attribute: CN (2.5.4.3) by default, or O (2.5.4.10). */
const name = (value, type = '2.5.4.3') => seq(tlv(0x31, seq(oid(type), tlv(0x0c, Buffer.from(value, 'utf8')))));
function utcTime(date) {
  const s = date.toISOString(); // 2026-01-02T03:04:05.678Z -> 260102030405Z
  return tlv(
    0x17,
    Buffer.from(
      `${s.slice(2, 4)}${s.slice(5, 7)}${s.slice(8, 10)}${s.slice(11, 13)}${s.slice(14, 16)}${s.slice(17, 19)}Z`,
    ),
  );
}
const extension = (id, critical, value) =>
  seq(oid(id), ...(critical ? [tlv(0x01, Buffer.from([0xff]))] : []), octets(value));
const ECDSA_SHA256 = seq(oid('1.2.840.10045.4.3.2'));
const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';
const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';

/** A subject key identifier: any stable digest of the public key does (RFC 5280 4.2.1.2). */
const keyId = (spki) => createHash('sha1').update(spki).digest();

/**
 * A certificate for `key` (subject: `cn`, or else `o`) signed by `issuer` ({ cn, privateKey, spki };
 * itself when absent: the CA).
 * `san`: DNS names and IPv4 addresses; `usages`: extended key usage OIDs of a leaf.
 */
function certificate({ cn, o, key, issuer, san = [], usages = [] }) {
  const spki = key.publicKey.export({ type: 'spki', format: 'der' });
  const ca = issuer === undefined;
  const signer = issuer ?? { cn, privateKey: key.privateKey, spki };
  const serial = randomBytes(16);
  serial[0] = (serial[0] & 0x7f) | 0x01; // positive, no leading zero byte
  const now = Date.now();
  const extensions = [
    extension('2.5.29.19', true, ca ? seq(tlv(0x01, Buffer.from([0xff]))) : seq()),
    // CA: keyCertSign | cRLSign; leaf: digitalSignature (ECDHE key exchange signs, never encrypts).
    extension('2.5.29.15', true, ca ? bits(Buffer.from([0x06]), 1) : bits(Buffer.from([0x80]), 7)),
    extension('2.5.29.14', false, octets(keyId(spki))),
    ...(ca ? [] : [extension('2.5.29.35', false, seq(tlv(0x80, keyId(signer.spki))))]),
    ...(usages.length ? [extension('2.5.29.37', false, seq(...usages.map(oid)))] : []),
    ...(san.length
      ? [
          extension(
            '2.5.29.17',
            false,
            seq(
              ...san.map((n) =>
                /^\d+\.\d+\.\d+\.\d+$/.test(n)
                  ? tlv(0x87, Buffer.from(n.split('.').map(Number)))
                  : tlv(0x82, Buffer.from(n, 'ascii')),
              ),
            ),
          ),
        ]
      : []),
  ];
  const tbs = seq(
    tlv(0xa0, tlv(0x02, Buffer.from([2]))),
    tlv(0x02, serial),
    ECDSA_SHA256,
    name(signer.cn),
    // An hour back: a container's clock a little behind the member's must not see "not yet valid".
    seq(utcTime(new Date(now - 3_600_000)), utcTime(new Date(now + VALID_DAYS * 86_400_000))),
    cn === undefined ? name(o, '2.5.4.10') : name(cn),
    spki,
    tlv(0xa3, seq(...extensions)),
  );
  const der = seq(tbs, ECDSA_SHA256, bits(sign('sha256', tbs, signer.privateKey)));
  const b64 = der.toString('base64').replace(/.{64}/g, '$&\n');
  return `-----BEGIN CERTIFICATE-----\n${b64.replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`;
}

const ecKey = () => generateKeyPairSync('ec', { namedCurve: 'P-256' });
const pkcs8 = (key) => key.privateKey.export({ type: 'pkcs8', format: 'pem' });

/** Writes every file whole or not at all (a temporary name, then a rename), mode 0600. */
function writeAll(files) {
  for (const [path, text] of files) {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeFileSync(`${path}.tmp`, text, { mode: 0o600 });
  }
  for (const [path] of files) renameSync(`${path}.tmp`, path);
}

function argOf(args, flag) {
  const i = args.indexOf(flag);
  if (i < 0 || i + 1 >= args.length) die(`${flag} is missing from the etcd arguments; the member must serve TLS`);
  return args[i + 1];
}

/** The TLS material and passwords, made once: kept across restarts (the volume), remade only if one is missing. */
function ensureMaterial(args, props) {
  const server = {
    ca: argOf(args, '--trusted-ca-file'),
    cert: argOf(args, '--cert-file'),
    key: argOf(args, '--key-file'),
  };
  const client = {
    ca: props['high-availability.etcd.tls.ca-file'],
    cert: props['high-availability.etcd.tls.cert-file'],
    key: props['high-availability.etcd.tls.key-file'],
    password: props['high-availability.etcd.password-file'],
  };
  for (const [k, v] of Object.entries(client))
    if (!v)
      die(`REBOUND_PROPERTIES sets no high-availability.etcd.${k === 'password' ? 'password-file' : `tls.${k}-file`}`);
  const caKey = join(dirname(server.key), 'ca-key.pem');
  const rootPassword = process.env.REBOUND_ETCD_ROOT_PASSWORD_FILE ?? '/etcd/root-password';
  const all = [...Object.values(server), ...Object.values(client), caKey, rootPassword];
  if (all.every((p) => existsSync(p))) return rootPassword;

  const caPair = ecKey();
  const caSpki = caPair.publicKey.export({ type: 'spki', format: 'der' });
  const caPem = certificate({ cn: 'rebound compose etcd CA', key: caPair });
  const issuer = { cn: 'rebound compose etcd CA', privateKey: caPair.privateKey, spki: caSpki };
  const serverPair = ecKey();
  const clientPair = ecKey();
  // clientAuth too: etcd's JSON gateway dials the member's gRPC port with this certificate.
  const serverPem = certificate({
    cn: 'etcd',
    key: serverPair,
    issuer,
    san: ['etcd', 'localhost', '127.0.0.1'],
    usages: [SERVER_AUTH, CLIENT_AUTH],
  });
  const clientPem = certificate({ o: CLIENT_O, key: clientPair, issuer, usages: [CLIENT_AUTH] });
  const password = () => `${randomBytes(24).toString('hex')}\n`;
  writeAll([
    [caKey, pkcs8(caPair)],
    [server.ca, caPem],
    [server.cert, serverPem],
    [server.key, pkcs8(serverPair)],
    [client.ca, caPem],
    [client.cert, clientPem],
    [client.key, pkcs8(clientPair)],
    [client.password, password()],
    [rootPassword, password()],
  ]);
  say(`made a CA, the member's and a client certificate, and the passwords of root and rebound`);
  return rootPassword;
}

/** POST to etcd's JSON gateway on this member with the client certificate: { status, body }. */
function gateway(props, path, body, token) {
  const tls = {
    ca: readFileSync(props['high-availability.etcd.tls.ca-file']),
    cert: readFileSync(props['high-availability.etcd.tls.cert-file']),
    key: readFileSync(props['high-availability.etcd.tls.key-file']),
  };
  return new Promise((resolve, reject) => {
    const req = request(
      `${local}${path}`,
      { method: 'POST', ...tls, headers: token ? { authorization: token } : {}, timeout: 10_000 },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d) => (text += d));
        res.on('end', () => {
          let parsed = {};
          try {
            parsed = JSON.parse(text);
          } catch {
            parsed = { error: text.trim() };
          }
          resolve({ status: res.statusCode, body: parsed });
        });
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('no answer within 10 s')));
    req.end(JSON.stringify(body));
  });
}

const b64 = (s) => Buffer.from(s).toString('base64');
const errorOf = (r) => String(r.body.error ?? r.body.message ?? `HTTP ${r.status}`);

/** Users, role and auth enable, unless a previous start did it (root can log in). */
async function enableAuth(props, rootPasswordFile) {
  const read = (p) => readFileSync(p, 'utf8').replace(/\r?\n$/, '');
  const rootPassword = read(rootPasswordFile);
  const login = await gateway(props, '/v3/auth/authenticate', { name: 'root', password: rootPassword });
  if (login.status === 200) return false;
  if (!/authentication is not enabled/.test(errorOf(login))) throw new Error(`root login: ${errorOf(login)}`);
  const prefix = `/${props['high-availability.cluster-id'] || 'default'}/`;
  const end = Buffer.from(prefix);
  end[end.length - 1] += 1;
  const steps = [
    ['/v3/auth/user/add', { name: 'root', password: rootPassword }],
    ['/v3/auth/role/add', { name: 'root' }],
    ['/v3/auth/user/grant', { user: 'root', role: 'root' }],
    [
      '/v3/auth/user/add',
      { name: props['high-availability.etcd.username'], password: read(props['high-availability.etcd.password-file']) },
    ],
    ['/v3/auth/role/add', { name: 'rebound' }],
    [
      '/v3/auth/role/grant',
      { name: 'rebound', perm: { permType: 'READWRITE', key: b64(prefix), range_end: end.toString('base64') } },
    ],
    ['/v3/auth/user/grant', { user: props['high-availability.etcd.username'], role: 'rebound' }],
    ['/v3/auth/enable', {}],
  ];
  for (const [path, body] of steps) {
    const r = await gateway(props, path, body);
    // A start that died half-way left some of them: they are what this one would make.
    if (r.status !== 200 && !/already exists|already granted/.test(errorOf(r)))
      throw new Error(`${path}: ${errorOf(r)}`);
  }
  return prefix;
}

const [binary, ...args] = process.argv.slice(2);
if (!binary) die('usage: etcd.mjs ETCD_BINARY ETCD_ARGS...');
const props = properties();
// This member's own client URL, from inside its container.
const local = argOf(args, '--listen-client-urls').split(',')[0].replace('//0.0.0.0:', '//127.0.0.1:');
if (!local.startsWith('https://')) die(`--listen-client-urls ${local} is not https://; the member must serve TLS only`);
if (!props['high-availability.etcd.username']) die('REBOUND_PROPERTIES sets no high-availability.etcd.username');
const rootPasswordFile = ensureMaterial(args, props);

const etcd = spawn(binary, args, { stdio: 'inherit' });
let exited = false;
etcd.on('error', (err) => die(`cannot run ${binary}: ${err.message}`));
etcd.on('exit', (code, signal) => {
  exited = true;
  process.exit(code ?? (signal ? 128 : 1));
});
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => etcd.kill(sig));

// Until the member answers (it may be electing itself, or replaying its log after a restart).
for (let attempt = 1; !exited; attempt++) {
  try {
    const done = await enableAuth(props, rootPasswordFile);
    say(
      done ? `auth enabled: users root and rebound (role rebound: readwrite on ${done})` : 'auth was enabled already',
    );
    break;
  } catch (err) {
    if (attempt % 20 === 0) say(`still setting up auth: ${err.message}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}
