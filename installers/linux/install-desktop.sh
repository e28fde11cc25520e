#!/usr/bin/env bash
# Put Pagewise in the desktop's app menu and "Open with" for PDFs, for this user only (~/.local).
#   installers/linux/install-desktop.sh [PROGRAM]      PROGRAM: the bundle's Pagewise (default: found
#                                                      next to this script's bundle, else the venv's pagewise)
#   installers/linux/install-desktop.sh --default      also make Pagewise the default PDF application
#   installers/linux/install-desktop.sh --uninstall
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=${XDG_DATA_HOME:-$HOME/.local/share}
APPS="$DATA/applications"
ICONS="$DATA/icons/hicolor"
make_default=0; uninstall=0; program=""
for arg in "$@"; do
  case "$arg" in
    --default) make_default=1 ;;
    --uninstall) uninstall=1 ;;
    *) program=$arg ;;
  esac
done
if [ "$uninstall" = 1 ]; then
  rm -f "$APPS/pagewise.desktop" "$ICONS"/*/apps/pagewise.png "$ICONS/scalable/apps/pagewise.svg"
  command -v update-desktop-database >/dev/null && update-desktop-database -q "$APPS" || true
  echo "Pagewise removed from the app menu"; exit 0
fi

# Where things are: in a bundle this script sits in Pagewise/_internal/installers/linux, the icons
# in Pagewise/_internal/resources/icons; in a source tree in installers/linux and resources/icons.
for root in "$HERE/../.." "$HERE/../../.."; do
  [ -f "$root/resources/icons/pagewise.svg" ] && { RES="$(cd "$root" && pwd)/resources"; break; }
done
[ -n "${RES:-}" ] || { echo "install-desktop.sh: cannot find resources/icons" >&2; exit 1; }
if [ -z "$program" ]; then
  for candidate in "$HERE/../../../Pagewise" "$HERE/../../.venv/bin/pagewise"; do
    [ -x "$candidate" ] && { program=$(cd "$(dirname "$candidate")" && pwd)/$(basename "$candidate"); break; }
  done
fi
[ -n "$program" ] && [ -x "$program" ] || { echo "install-desktop.sh: no Pagewise program found; pass its path" >&2; exit 1; }

mkdir -p "$APPS" "$ICONS/scalable/apps"
for size in 16 24 32 48 64 128 256 512; do
  mkdir -p "$ICONS/${size}x${size}/apps"
  cp "$RES/icons/pagewise-$size.png" "$ICONS/${size}x${size}/apps/pagewise.png"
done
cp "$RES/icons/pagewise.svg" "$ICONS/scalable/apps/pagewise.svg"
quoted=$(printf '%s' "$program" | sed 's/[\\"`$]/\\&/g')
sed -e "s|^Exec=.*|Exec=\"$quoted\" gui %F|" -e "s|^TryExec=.*|TryExec=$program|" \
    "$HERE/pagewise.desktop" > "$APPS/pagewise.desktop"
chmod 644 "$APPS/pagewise.desktop"
command -v update-desktop-database >/dev/null && update-desktop-database -q "$APPS" || true
command -v gtk-update-icon-cache >/dev/null && gtk-update-icon-cache -q -t "$ICONS" 2>/dev/null || true
if [ "$make_default" = 1 ] && command -v xdg-mime >/dev/null; then
  xdg-mime default pagewise.desktop application/pdf
fi
echo "Pagewise is in the app menu ($APPS/pagewise.desktop → $program)"
