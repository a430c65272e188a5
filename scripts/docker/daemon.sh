#!/bin/sh
# Entry point of the compose daemons. Closed by default: the cluster secret every RPC carries
# (security.auth.token-file) lives in the shared volume; the first daemon to start creates it
# (O_EXCL, mode 0600), every other one and the client read the same file.
set -e
node -e '
const fs = require("node:fs");
const path = process.env.REBOUND_AUTH_TOKEN_FILE;
try {
  fs.writeFileSync(path, require("node:crypto").randomBytes(32).toString("hex") + "\n", { flag: "wx", mode: 0o600 });
} catch (err) {
  if (err.code !== "EEXIST") throw err;
}'
exec node bin/rebound.js "$@" -D "security.auth.token-file=$REBOUND_AUTH_TOKEN_FILE"
