#!/usr/bin/env bash
# Build Coco's Linux bundle: dist/coco/ (one folder: the coco executable, its libraries and
# resources, desktop integration files and install.sh) and dist/coco-<version>-linux-<arch>.tar.gz.
# Then check it: the bundled executable prints its version and passes --self-test headless.
#
#   packaging/build-linux.sh              build and check
#   packaging/build-linux.sh --no-check   build only
#
# PYTHON selects the interpreter (default .venv/bin/python); it needs the project installed with
# the packaging extra:  pip install -e ".[packaging]"
set -euo pipefail

cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-.venv/bin/python}"
CHECK=1
for arg in "$@"; do
    case "$arg" in
        --no-check) CHECK=0 ;;
        -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "build-linux.sh: unknown option $arg" >&2; exit 2 ;;
    esac
done

if ! "$PYTHON" -c "import PyInstaller" 2>/dev/null; then
    echo "PyInstaller is missing: $PYTHON -m pip install -e '.[packaging]'" >&2
    exit 1
fi
VERSION=$("$PYTHON" -c "import app; print(app.__version__)")
APP_ID=$("$PYTHON" -c "from app.appinfo import APP_ID; print(APP_ID)")
ARCH=$(uname -m)
BUNDLE=dist/coco

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

TARBALL="dist/coco-$VERSION-linux-$ARCH.tar.gz"
tar -czf "$TARBALL" -C dist coco
elapsed=$(( $(date +%s) - start ))

echo "==> Built in ${elapsed} s"
echo "    bundle:  $BUNDLE ($(du -sh "$BUNDLE" | cut -f1))"
echo "    archive: $TARBALL ($(du -sh "$TARBALL" | cut -f1))"

if [ "$CHECK" = 1 ]; then
    echo "==> Checking the bundle"
    "$BUNDLE/coco" --version
    check_start=$(date +%s)
    QT_QPA_PLATFORM=offscreen "$BUNDLE/coco" --self-test
    echo "==> Self-test of the bundle passed in $(( $(date +%s) - check_start )) s"
fi
