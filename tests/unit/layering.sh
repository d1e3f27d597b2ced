#!/usr/bin/env bash
# The order of core/ (docs/ARCHITECTURE.md, "Layout"): every folder includes only the folders
# before it in `outer`, and inside core/engine every wing only the wings before it in `wings`;
# no file outside a wing includes a wing's inside (a subfolder such as cdc/pg/). Prints every
# include that breaks the order and exits 1, or exits 0.
#   layering.sh SOURCE_DIR
set -euo pipefail
cd "${1:?usage: layering.sh SOURCE_DIR}"

outer=(base model db readers mergers state config engine agent)
wings=(jobs endpoints rows schema twoway slots reconcile sync cdc status run commands)

rank() { # rank NAME LIST...
  local name=$1 i=0; shift
  for w in "$@"; do [[ $w == "$name" ]] && { echo "$i"; return; }; i=$((i + 1)); done
  echo -1
}

bad=0
while IFS=: read -r file line inc; do
  inc=${inc#*\"}; inc=${inc%\"*}
  from=$(cut -d/ -f2 <<<"$file"); to=$(cut -d/ -f2 <<<"$inc")
  rf=$(rank "$from" "${outer[@]}"); rt=$(rank "$to" "${outer[@]}")
  if ((rf < 0 || rt < 0)); then
    echo "unknown folder: $file:$line includes $inc"; bad=1; continue
  fi
  if ((rt > rf)); then
    echo "up: $file:$line includes $inc ($from is below $to)"; bad=1; continue
  fi
  [[ $from == engine && $to == engine ]] || continue
  wf=$(cut -d/ -f3 <<<"$file"); wt=$(cut -d/ -f3 <<<"$inc")
  if [[ $(rank "$wf" "${wings[@]}") -lt 0 || $(rank "$wt" "${wings[@]}") -lt 0 ]]; then
    echo "not in a wing: $file:$line includes $inc"; bad=1; continue
  fi
  if [[ $wf != "$wt" ]]; then
    if (($(rank "$wt" "${wings[@]}") > $(rank "$wf" "${wings[@]}"))); then
      echo "up: $file:$line includes $inc (wing $wf is below wing $wt)"; bad=1
    fi
    # A wing's face is its top level; its subfolders are its inside.
    if [[ $(cut -d/ -f4- <<<"$inc") == */* ]]; then
      echo "inside: $file:$line includes $inc (another wing's subfolder)"; bad=1
    fi
  fi
done < <(grep -rnoE '^#include "core/[a-z]+/[a-z0-9_/]+\.h"' core --include='*.h' --include='*.cpp')

if ((bad)); then
  echo "layering: includes against the order above (docs/ARCHITECTURE.md, Layout)" >&2
  exit 1
fi
echo "layering: every include of core/ goes down"
