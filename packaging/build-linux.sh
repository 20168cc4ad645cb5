#!/usr/bin/env bash
# Build Coco's Linux bundle: dist/coco/ (one folder: the coco executable, its libraries and
# resources, desktop integration files and install.sh) and dist/coco-<version>-linux-<arch>.tar.gz.
# It fails rather than ship a broken bundle:
#   - before building, every library Qt's X11/Wayland plugins link must be on this machine
#     (packaging/qt_libs.py names the Debian packages to install when one is missing);
#   - after building, every such library must be inside the bundle (or be a system library
#     PyInstaller leaves out on purpose: GL/EGL, libxcb, libwayland-*);
#   - the bundle prints its version and passes --self-test headless (offscreen) and on the real
#     X11 platform (xcb) under Xvfb (xvfb-run).
# It ends with the figures: build time, bundle and archive sizes, what the target system needs.
#
#   packaging/build-linux.sh              build and check
#   packaging/build-linux.sh --no-check   build only (the library checks still run)
#
# PYTHON selects the interpreter (default .venv/bin/python); it needs the project installed with
# the packaging extra:  pip install -e ".[packaging]". The X11 self-test needs xvfb and xauth.
set -euo pipefail

cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-.venv/bin/python}"
CHECK=1
for arg in "$@"; do
    case "$arg" in
        --no-check) CHECK=0 ;;
        -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "build-linux.sh: unknown option $arg" >&2; exit 2 ;;
    esac
done

if ! "$PYTHON" -c "import PyInstaller" 2>/dev/null; then
    echo "PyInstaller is missing: $PYTHON -m pip install -e '.[packaging]'" >&2
    exit 1
fi
if [ "$CHECK" = 1 ] && ! command -v xvfb-run >/dev/null; then
    echo "xvfb-run is missing (the X11 self-test needs it): sudo apt-get install xvfb xauth" >&2
    exit 1
fi
VERSION=$("$PYTHON" -c "import app; print(app.__version__)")
APP_ID=$("$PYTHON" -c "from app.appinfo import APP_ID; print(APP_ID)")
ARCH=$(uname -m)
BUNDLE=dist/coco

echo "==> Checking the libraries of Qt's X11/Wayland plugins on this machine"
"$PYTHON" packaging/qt_libs.py build-machine

echo "==> Building Coco $VERSION for Linux ($ARCH)"
start=$(date +%s)
QT_QPA_PLATFORM=offscreen "$PYTHON" -m PyInstaller --noconfirm --clean --log-level WARN \
    --distpath dist --workpath build/pyinstaller packaging/coco.spec

echo "==> Adding the desktop entry, AppStream metadata and icons"
mkdir -p "$BUNDLE/share/applications" "$BUNDLE/share/metainfo"
cp "packaging/linux/$APP_ID.desktop" "$BUNDLE/share/applications/"
cp "packaging/linux/$APP_ID.metainfo.xml" "$BUNDLE/share/metainfo/"
for size in 16 24 32 48 64 128 256 512; do
    mkdir -p "$BUNDLE/share/icons/hicolor/${size}x${size}/apps"
    cp "build/icons/coco-$size.png" "$BUNDLE/share/icons/hicolor/${size}x${size}/apps/$APP_ID.png"
done
mkdir -p "$BUNDLE/share/icons/hicolor/scalable/apps"
cp resources/icons/coco.svg "$BUNDLE/share/icons/hicolor/scalable/apps/$APP_ID.svg"
cp packaging/linux/install.sh "$BUNDLE/install.sh"
chmod +x "$BUNDLE/install.sh"

echo "==> Checking the libraries of Qt's X11/Wayland plugins inside the bundle"
target_needs=$("$PYTHON" packaging/qt_libs.py bundle "$BUNDLE")
echo "$target_needs"

TARBALL="dist/coco-$VERSION-linux-$ARCH.tar.gz"
tar -czf "$TARBALL" -C dist coco
elapsed=$(( $(date +%s) - start ))

if [ "$CHECK" = 1 ]; then
    echo "==> Checking the bundle"
    "$BUNDLE/coco" --version
    # No TIKTOKEN_CACHE_DIR: exact token counts must come from the files in the bundle.
    echo "--- --self-test, headless (offscreen)"
    env -u TIKTOKEN_CACHE_DIR QT_QPA_PLATFORM=offscreen "$BUNDLE/coco" --self-test
    echo "--- --self-test on X11 (xcb) under Xvfb"
    xcb_log=$(mktemp)
    if ! env -u TIKTOKEN_CACHE_DIR -u WAYLAND_DISPLAY QT_QPA_PLATFORM=xcb \
            xvfb-run --auto-servernum --server-args="-screen 0 1280x800x24" \
            "$BUNDLE/coco" --self-test 2>&1 | tee "$xcb_log"; then
        rm -f "$xcb_log"
        echo "FAIL  the bundle's self-test on X11 (xcb) failed" >&2
        exit 1
    fi
    if ! grep -q "on the 'xcb' platform" "$xcb_log"; then
        rm -f "$xcb_log"
        echo "FAIL  the X11 self-test did not run on Qt's xcb platform" >&2
        exit 1
    fi
    rm -f "$xcb_log"
fi

mb() { du -sm "$1" | cut -f1; }
echo "==> Figures"
echo "    build time: ${elapsed} s (PyInstaller, desktop files, library check, archive)"
echo "    bundle:     $BUNDLE: $(mb "$BUNDLE") MB (Qt $(mb "$BUNDLE/_internal/PySide6") MB, of which" \
     "ICU data $(( $(stat -c %s "$BUNDLE"/_internal/PySide6/Qt/lib/libicudata.so.* | head -n 1) / 1048576 )) MB;" \
     "tokenizer files $(mb "$BUNDLE/_internal/app/core/tokens/data/tiktoken") MB)"
echo "    archive:    $TARBALL: $(mb "$TARBALL") MB"
echo "$target_needs" | grep "target system needs" || true
if [ "$CHECK" = 1 ]; then
    echo "==> PASS: built, libraries complete, self-test passed offscreen and on X11 (xcb)"
else
    echo "==> Built (libraries complete; the self-tests were skipped: --no-check)"
fi
