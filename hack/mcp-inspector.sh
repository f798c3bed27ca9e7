#!/usr/bin/env bash
# Install the MCP Inspector's command-line client, the MCP client the
# end-to-end tests and `make demo` drive `kubectl ocm mcp` with, from the npm
# registry into DIR, with the Node.js it needs (also from the npm registry:
# the Inspector needs Node 22, newer than Debian's). npm itself comes from
# Debian when missing (needs root there).
#
#   hack/mcp-inspector.sh DIR
#
# DIR/mcp-inspector then runs the Inspector's CLI with that Node.js.
set -euo pipefail

INSPECTOR_VERSION=0.17.5
NODE_VERSION=22.23.3
DIR=${1:?usage: hack/mcp-inspector.sh DIR}
STAMP=$DIR/.installed-$INSPECTOR_VERSION-node-$NODE_VERSION

if [[ -f $STAMP && -x $DIR/mcp-inspector ]]; then
	echo "mcp-inspector: the MCP Inspector $INSPECTOR_VERSION (Node.js $NODE_VERSION) is installed in $DIR"
	exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
	if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
		echo "mcp-inspector: npm is missing: install it (Debian: apt-get install npm) and run again" >&2
		exit 1
	fi
	echo "mcp-inspector: installing npm from Debian"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm >/dev/null
fi

echo "mcp-inspector: installing @modelcontextprotocol/inspector@$INSPECTOR_VERSION and node@$NODE_VERSION from the npm registry into $DIR"
start=$SECONDS
rm -rf "$DIR"
mkdir -p "$DIR"
echo '{"private": true, "description": "the MCP client of the end-to-end tests and the demo"}' >"$DIR/package.json"
(cd "$DIR" && npm install --no-audit --no-fund --loglevel=error \
	"node@$NODE_VERSION" "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" >/dev/null)
node=$DIR/node_modules/node/bin/node
cli=$DIR/node_modules/@modelcontextprotocol/inspector/cli/build/cli.js
if ! "$node" --version >/dev/null 2>&1 || [[ ! -f $cli ]]; then
	echo "mcp-inspector: the install in $DIR has no working node ($node) or no Inspector CLI ($cli)" >&2
	exit 1
fi
cat >"$DIR/mcp-inspector" <<SCRIPT
#!/bin/sh
# The MCP Inspector $INSPECTOR_VERSION in CLI mode, with Node.js $NODE_VERSION.
PATH="$DIR/node_modules/.bin:\$PATH" exec "$node" "$cli" --cli "\$@"
SCRIPT
chmod +x "$DIR/mcp-inspector"
touch "$STAMP"
echo "mcp-inspector: installed in $((SECONDS - start))s: $DIR/mcp-inspector"
