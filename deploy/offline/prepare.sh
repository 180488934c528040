#!/usr/bin/env bash
# Make what an offline `docker build` of the Dockerfile needs (see README.md beside this file):
# the base image zerowire-base:node24 and the npm cache deploy/offline/npm-cache. Idempotent.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
image=${ZEROWIRE_BASE_IMAGE:-zerowire-base:node24}

node_bin="$repo/node_modules/node/bin/node"
[ -x "$node_bin" ] || { echo "prepare.sh: $node_bin is missing: run npm ci first" >&2; exit 1; }
npm_dir=$(npm root -g)/npm
[ -f "$npm_dir/bin/npm-cli.js" ] || { echo "prepare.sh: npm not found at $npm_dir" >&2; exit 1; }

if [ -z "$(docker images -q "$image" 2>/dev/null)" ] || [ "${FORCE:-}" = 1 ]; then
  root=$(mktemp -d)
  trap 'rm -rf "$root"' EXIT
  mkdir -p "$root"/{bin,usr/bin,usr/local/bin,usr/local/lib/node_modules,etc,tmp,home/node,app}
  chmod 1777 "$root/tmp"
  cp "$node_bin" "$root/usr/local/bin/node"
  cp -a "$npm_dir" "$root/usr/local/lib/node_modules/npm"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  cp "$(readlink -f /bin/sh)" "$root/bin/sh"
  cp "$(readlink -f /usr/bin/env)" "$root/usr/bin/env"
  # Every shared library those binaries load, at the path the loader expects.
  for bin in "$node_bin" /bin/sh /usr/bin/env; do
    ldd "$(readlink -f "$bin")" | awk '/=>/ {print $3} /^[ \t]*\// {print $1}' | while read -r lib; do
      [ -n "$lib" ] || continue
      mkdir -p "$root$(dirname "$lib")"
      cp -L "$lib" "$root$lib"
    done
  done
  printf 'root:x:0:0:root:/root:/bin/sh\nnode:x:1000:1000:node:/home/node:/bin/sh\n' > "$root/etc/passwd"
  printf 'root:x:0:\nnode:x:1000:\n' > "$root/etc/group"
  chown 1000:1000 "$root/home/node"
  tar -C "$root" -c . | docker import -c 'ENV PATH=/usr/local/bin:/usr/bin:/bin' -c 'WORKDIR /app' - "$image" >/dev/null
  echo "prepare.sh: made $image ($("$node_bin" --version))"
fi

cache="$here/npm-cache"
if [ ! -f "$cache/.complete" ] || [ "$repo/package-lock.json" -nt "$cache/.complete" ]; then
  work=$(mktemp -d)
  cp "$repo/package.json" "$repo/package-lock.json" "$work/"
  (cd "$work" && npm ci --ignore-scripts --no-audit --no-fund --cache "$cache" >/dev/null)
  rm -rf "$work"
  touch "$cache/.complete"
  echo "prepare.sh: filled $cache"
fi
