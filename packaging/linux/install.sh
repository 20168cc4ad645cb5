#!/bin/sh
# Install this Coco bundle for the current user: the program, a menu entry, icons and the
# AppStream metadata. Run it from the unpacked bundle folder.
#
#   ./install.sh                 install into ~/.local (program in ~/.local/lib/coco,
#                                command ~/.local/bin/coco)
#   ./install.sh --prefix DIR    install into DIR instead (e.g. /usr/local, as root)
#   ./install.sh --uninstall     remove what an earlier install put there
set -eu

APP_ID="io.github.coco_chat.Coco"
HERE=$(cd "$(dirname "$0")" && pwd)
PREFIX="${HOME}/.local"
ACTION=install

while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) PREFIX="$2"; shift 2 ;;
        --prefix=*) PREFIX="${1#--prefix=}"; shift ;;
        --uninstall) ACTION=uninstall; shift ;;
        -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install.sh: unknown option $1" >&2; exit 2 ;;
    esac
done

LIB="$PREFIX/lib/coco"
BIN="$PREFIX/bin"
SHARE="$PREFIX/share"
SIZES="16 24 32 48 64 128 256 512"

refresh_caches() {
    # Menus and icon themes pick the files up by themselves; these only make it immediate.
    command -v update-desktop-database >/dev/null 2>&1 \
        && update-desktop-database -q "$SHARE/applications" 2>/dev/null || true
    command -v gtk-update-icon-cache >/dev/null 2>&1 \
        && gtk-update-icon-cache -q -t "$SHARE/icons/hicolor" 2>/dev/null || true
}

if [ "$ACTION" = uninstall ]; then
    rm -rf "$LIB"
    if [ -L "$BIN/coco" ]; then rm -f "$BIN/coco"; fi
    rm -f "$SHARE/applications/$APP_ID.desktop" "$SHARE/metainfo/$APP_ID.metainfo.xml"
    rm -f "$SHARE/icons/hicolor/scalable/apps/$APP_ID.svg"
    for size in $SIZES; do
        rm -f "$SHARE/icons/hicolor/${size}x${size}/apps/$APP_ID.png"
    done
    # The menu and icon caches stay only while other programs' entries and icons need them;
    # otherwise they (and the folders install.sh made, when empty) go too: nothing is left.
    if [ -n "$(find "$SHARE/applications" -name '*.desktop' 2>/dev/null | head -n 1)" ]; then
        command -v update-desktop-database >/dev/null 2>&1 \
            && update-desktop-database -q "$SHARE/applications" 2>/dev/null || true
    else
        rm -f "$SHARE/applications/mimeinfo.cache"
    fi
    if [ -n "$(find "$SHARE/icons/hicolor" -type f ! -name icon-theme.cache 2>/dev/null \
            | head -n 1)" ]; then
        command -v gtk-update-icon-cache >/dev/null 2>&1 \
            && gtk-update-icon-cache -q -t "$SHARE/icons/hicolor" 2>/dev/null || true
    else
        rm -f "$SHARE/icons/hicolor/icon-theme.cache"
    fi
    for size in $SIZES scalable; do
        case "$size" in scalable) dir=scalable ;; *) dir="${size}x${size}" ;; esac
        rmdir "$SHARE/icons/hicolor/$dir/apps" "$SHARE/icons/hicolor/$dir" 2>/dev/null || true
    done
    rmdir "$SHARE/icons/hicolor" "$SHARE/icons" "$SHARE/applications" "$SHARE/metainfo" \
        "$PREFIX/lib" 2>/dev/null || true
    echo "Coco removed from $PREFIX (your settings and sessions are kept)."
    exit 0
fi

if [ ! -x "$HERE/coco" ] || [ ! -d "$HERE/share" ]; then
    echo "install.sh: run me from the unpacked Coco bundle (coco and share/ next to me)" >&2
    exit 1
fi

mkdir -p "$LIB" "$BIN" "$SHARE/applications" "$SHARE/metainfo"
if [ "$HERE" != "$LIB" ]; then
    rm -rf "$LIB"
    mkdir -p "$LIB"
    cp -R "$HERE/." "$LIB/"
fi
ln -sf "$LIB/coco" "$BIN/coco"
# The menu entry runs the installed program by its full path (~/.local/bin may not be on PATH).
sed "s|^Exec=coco|Exec=\"$LIB/coco\"|" "$HERE/share/applications/$APP_ID.desktop" \
    > "$SHARE/applications/$APP_ID.desktop"
cp "$HERE/share/metainfo/$APP_ID.metainfo.xml" "$SHARE/metainfo/"
for size in $SIZES; do
    mkdir -p "$SHARE/icons/hicolor/${size}x${size}/apps"
    cp "$HERE/share/icons/hicolor/${size}x${size}/apps/$APP_ID.png" \
        "$SHARE/icons/hicolor/${size}x${size}/apps/"
done
mkdir -p "$SHARE/icons/hicolor/scalable/apps"
cp "$HERE/share/icons/hicolor/scalable/apps/$APP_ID.svg" "$SHARE/icons/hicolor/scalable/apps/"
refresh_caches
echo "Coco installed: $BIN/coco (menu entry: $SHARE/applications/$APP_ID.desktop)"
