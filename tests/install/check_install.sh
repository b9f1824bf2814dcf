#!/usr/bin/env bash
# meson install into a scratch DESTDIR, then build and run consumer.c against it with pkg-config.
set -euo pipefail
build=$1; here=$(cd "$(dirname "$0")" && pwd)
dest=$(mktemp -d); trap 'rm -rf "$dest"' EXIT
meson install -C "$build" --no-rebuild --destdir "$dest" --quiet
pc=$(find "$dest" -name akgkernels.pc)
prefix=$(sed -n 's/^prefix=//p' "$pc")
flags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --define-variable=prefix="$dest$prefix" --cflags --libs --static akgkernels)
cc -std=c99 -o "$dest/consumer" "$here/consumer.c" $flags
"$dest/consumer"
