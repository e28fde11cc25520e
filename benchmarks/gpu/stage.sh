#!/bin/bash
# GPU-machine side: append one part of the bundle (sent along with the command) to /tmp/stage/bundle.tar,
# after checking that the earlier parts are there (the machine was not lost).
# usage (repo root): bash benchmarks/gpu/stage.sh NN      (with .whl/partNN carried)
N=$1; B=/tmp/stage/bundle.tar; mkdir -p /tmp/stage
[ "$N" = 00 ] && rm -f $B
expect=$(awk -v n="$N" '$1+0 < n+0 {s+=$2} END {print s+0}' benchmarks/gpu/parts.txt)
have=$(stat -c%s $B 2>/dev/null || echo 0)
if [ "$have" != "$expect" ]; then
  echo "STAGE LOST: $have bytes staged, $expect expected before part $N: start again from part 00"; exit 3
fi
cat .whl/part$N >> $B && echo "staged part $N: $(stat -c%s $B) bytes"
