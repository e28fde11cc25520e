#!/bin/bash
# Device side: check the assembled bundle, unpack its wheels, install them to /tmp/site.
# usage (repo root): bash benchmarks/gpu/install.sh   (bundle at /tmp/stage/bundle.tar)
set -e
cd /tmp/stage
sha256sum -c "$OLDPWD/benchmarks/gpu/bundle.sha256"
rm -rf whl && mkdir whl && tar xf bundle.tar -C whl
t0=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site whl/*.whl 2>&1 | grep -v "^WARNING: Target directory" || true
echo "pip install took $(( $(date +%s) - t0 )) s; $(ls whl | wc -l) wheels"
