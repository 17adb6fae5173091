#!/usr/bin/env bash
# Packs the Claude Desktop extension bundle (.mcpb) of one platform's binary:
#
#   deploy/mcpb/pack.sh BINARY OS ARCH VERSION OUT.mcpb
#
# OS is linux, darwin or windows; ARCH amd64 or arm64. GoReleaser runs it
# after each build (.goreleaser.yaml). The bundle holds manifest.json (this
# folder's, with the version and the platform filled in), the binary and
# LICENSE. mcpb, pinned in testdata/mcpb (npm ci there), validates the
# manifest and packs it; any failure stops the build.
set -euo pipefail

if [ $# -ne 5 ]; then
  echo "usage: $0 BINARY OS ARCH VERSION OUT.mcpb" >&2
  exit 2
fi
bin=$1 os=$2 arch=$3 version=$4 out=$5
root=$(cd "$(dirname "$0")/../.." && pwd)
mcpb=$root/testdata/mcpb/node_modules/.bin/mcpb
if [ ! -x "$mcpb" ]; then
  echo "mcpb pack: $mcpb is not installed (cd testdata/mcpb && npm ci)" >&2
  exit 1
fi
case $os in
  linux | darwin) platform=$os exe= ;;
  windows) platform=win32 exe=.exe ;;
  *) echo "mcpb pack: no Claude Desktop platform for OS $os" >&2; exit 1 ;;
esac
case $arch in
  amd64 | arm64) ;;
  *) echo "mcpb pack: unsupported ARCH $arch" >&2; exit 1 ;;
esac
if [ ! -f "$bin" ]; then
  echo "mcpb pack: no binary at $bin" >&2
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
install -m 0755 "$bin" "$work/mcp-workbench$exe"
install -m 0644 "$root/LICENSE" "$work/LICENSE"
# The manifest of this bundle: its version, its one platform, and on
# Windows the binary's .exe (named, rather than left to the host to add).
node - "$root/deploy/mcpb/manifest.json" "$work/manifest.json" "$version" "$platform" "$exe" <<'JS'
const fs = require("fs");
const [src, dst, version, platform, exe] = process.argv.slice(2);
const m = JSON.parse(fs.readFileSync(src, "utf8"));
m.version = version;
m.compatibility.platforms = [platform];
m.server.entry_point += exe;
m.server.mcp_config.command += exe;
fs.writeFileSync(dst, JSON.stringify(m, null, 2) + "\n");
JS
if ! msg=$("$mcpb" validate "$work/manifest.json" 2>&1); then
  echo "$msg" >&2
  echo "mcpb pack: the manifest of $os/$arch is not valid" >&2
  exit 1
fi
mkdir -p "$(dirname "$out")"
if ! msg=$("$mcpb" pack "$work" "$out" 2>&1); then
  echo "$msg" >&2
  echo "mcpb pack: packing $out failed" >&2
  exit 1
fi
echo "mcpb pack: $out"
