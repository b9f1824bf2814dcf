#!/usr/bin/env bash
# The README's list of ops (the first code block under "## Supported ops") is what `akg-gen ops`
# prints. Usage: check_readme_ops.sh AKG_GEN README.md
set -euo pipefail
akg_gen=$1 readme=$2
listed=$(awk '/^## Supported ops/ {section = 1; next} section && /^```/ {if (inside) exit; inside = 1; next} inside {print}' "$readme")
printed=$("$akg_gen" ops)
if [ "$listed" != "$printed" ]; then
  echo "README.md's op list differs from 'akg-gen ops' (paste its output into the README):"
  diff <(echo "$listed") <(echo "$printed") || true
  exit 1
fi
echo "README.md lists the $(grep -c '' <<<"$printed") lines akg-gen ops prints"
