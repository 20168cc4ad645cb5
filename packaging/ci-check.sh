#!/usr/bin/env bash
# CI for the Linux bundle, from a clean clone (Debian/Ubuntu, as root or with sudo):
#   1. installs the packaging extra into .venv (made if missing) and the Debian packages the
#      build and its checks need: Qt's X11/Wayland libraries (app/qt_preflight.py's table),
#      xvfb and xauth, desktop-file-utils, appstream, a font;
#   2. builds the bundle with packaging/build-linux.sh, which checks the plugins' libraries on
#      this machine and inside the bundle and runs the bundle's --self-test offscreen and on X11
#      (xcb) under Xvfb;
#   3. validates the .desktop entry (desktop-file-validate) and the AppStream metadata
#      (appstreamcli validate) the bundle ships;
#   4. checks that the wheel carries the tokenizer files;
#   5. unpacks the archive, installs it into a HOME with a space in its name, runs it, uninstalls
#      it and checks that nothing is left.
# It prints how long each part took. Exit status 0 when everything passed.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
step_started=""
step() {
    local now
    now=$(date +%s)
    [ -z "$step_started" ] || echo "    ($(( now - step_started )) s)"
    step_started=$now
    echo "==> ci-check: $*"
}

step "packaging extra"
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install --quiet -e ".[packaging]"

step "Debian packages"
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
qt_packages=$(.venv/bin/python -c \
    "from app.qt_preflight import LIBRARY_PACKAGES; print(*sorted(set(LIBRARY_PACKAGES.values())))")
missing=()
for package in $qt_packages xvfb xauth desktop-file-utils appstream fonts-dejavu-core; do
    if [ "$(dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null)" != installed ]; then
        missing+=("$package")
    fi
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "    installing: ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null
else
    echo "    all installed"
fi

step "build the bundle (library checks, self-test offscreen and on xcb under Xvfb)"
rm -rf build/pyinstaller dist
packaging/build-linux.sh

step "validate the desktop entry and the AppStream metadata"
desktop-file-validate dist/coco/share/applications/*.desktop
appstreamcli validate --no-net dist/coco/share/metainfo/*.metainfo.xml

step "the wheel carries the tokenizer files"
wheel_dir=$(mktemp -d)
trap 'rm -rf "$wheel_dir"' EXIT
.venv/bin/pip wheel --quiet --no-deps --wheel-dir "$wheel_dir" .
.venv/bin/python - "$wheel_dir" <<'EOF'
import sys, zipfile
from pathlib import Path

wheel = next(Path(sys.argv[1]).glob("*.whl"))
names = set(zipfile.ZipFile(wheel).namelist())
wanted = {f"app/core/tokens/data/tiktoken/{n}.tiktoken" for n in ("o200k_base", "cl100k_base")}
if not wanted <= names:
    sys.exit(f"FAIL  {wheel.name} lacks {sorted(wanted - names)}")
print(f"    {wheel.name} holds {', '.join(sorted(wanted))}")
EOF

step "install, run and uninstall the archive in a HOME with a space"
home="$wheel_dir/home with space"
mkdir -p "$home/unpacked"
tar -xzf dist/coco-*-linux-*.tar.gz -C "$home/unpacked"
HOME="$home" "$home/unpacked/coco/install.sh"
HOME="$home" "$home/.local/bin/coco" --version
HOME="$home" "$home/.local/lib/coco/install.sh" --uninstall
left=$(find "$home/.local" -type f)
if [ -n "$left" ]; then
    echo "FAIL  the uninstall left files behind:" >&2
    echo "$left" >&2
    exit 1
fi

step "done"
echo "==> ci-check: PASS in $(( $(date +%s) - started )) s"
