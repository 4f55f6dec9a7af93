#!/bin/sh
# Installs the Debian packages tidepool needs, skipping what is already present. Safe to
# run repeatedly; does nothing when all are installed.
#
#   sh scripts/install-deps.sh build   what building and rendering need (make, make demo)
#   sh scripts/install-deps.sh         everything: build, test, fuzz and bench (make test)
#   sh scripts/install-deps.sh --list build   prints a tier's packages, installs nothing
set -eu
list=""
[ "${1:-}" = --list ] && { list=1; shift; }
tier=${1:-all}

# The build tier: the C compiler and make (gcc, libc6-dev, make: not build-essential,
# whose g++ and dpkg-dev the build never runs and which are a sixth of the download), the
# libraries the program and libtidepool link (the Makefile's PKGS and AV_PKGS), xxd (the
# embedded pages) and scdoc (the man page).
BUILD_PKGS="gcc libc6-dev make pkg-config libpng-dev libavcodec-dev libavformat-dev
libavutil-dev libswscale-dev libcjson-dev libxxhash-dev libfftw3-dev libmicrohttpd-dev
nettle-dev libopenexr-dev libdeflate-dev libwebp-dev xxd scdoc"

# clang, libclang-rt-14-dev (libFuzzer and the sanitizer runtimes for clang; only
# recommended by clang, so named here) and libomp-dev (OpenMP for clang) build the fuzz
# targets of tests/fuzz; zlib1g-dev lets tests write PNGs byte by byte; libfftw3-dev is
# FFTW, the airy solver's transforms; python3-numpy, python3-pytest and python3-pil run the
# Python module's tests (tests/python); xxd embeds the compare report's page and the
# preview's; chromium, chromium-driver and python3-selenium run the browser tests
# (tests/browser); libmicrohttpd-dev is the preview's HTTP server and curl its smoke
# test (tests/preview).
# libopenexr-dev (OpenEXRCore) and libdeflate-dev write the OpenEXR maps, and openexr
# (exrheader) and python3-openimageio read them back in the tests. libspng-dev is the
# other PNG decoder `make bench` measures against libpng (tidepool-bench --png-decode).
# blender runs docs/textures.md's Blender recipe headless (make check-blender; its
# Python reads the EXRs with python3-openimageio).
PKGS="build-essential pkg-config libpng-dev libavcodec-dev libavformat-dev
libavutil-dev libswscale-dev libcjson-dev libcriterion-dev ffmpeg imagemagick parallel
scdoc python3 python3-jsonschema python3-junitparser
zlib1g-dev clang libclang-rt-14-dev libomp-dev libxxhash-dev xxhash libfftw3-dev
python3-numpy python3-pytest python3-pil xxd chromium chromium-driver python3-selenium
libmicrohttpd-dev curl nettle-dev
libopenexr-dev libdeflate-dev openexr python3-openimageio
libspng-dev"
PKGS="$PKGS blender"
# The Python package (pyproject.toml): python3-setuptools, python3-wheel and python3-pip
# build and install it into a venv (python3-venv) in make check-pip; python3-mypy checks
# its type hints (make check-python).
PKGS="$PKGS python3-setuptools python3-wheel python3-pip python3-venv python3-mypy"
# man-db (man -l, col) shows the manual page as a reader sees it (tests/man_underscores.py).
PKGS="$PKGS man-db"
# zip packs the Blender add-on (make blender-zip); xvfb runs Blender's interface on a
# virtual display for the add-on's modal bake (make check-blender)
PKGS="$PKGS zip xvfb xauth"

case $tier in
build) PKGS=$BUILD_PKGS ;;
all) PKGS="$BUILD_PKGS $PKGS" ;;
*) echo "install-deps: unknown tier '$tier' (build or all)" >&2; exit 2 ;;
esac
[ -n "$list" ] && { echo $PKGS | tr ' ' '\n'; exit 0; }

missing=""
for p in $PKGS; do
	case " $missing " in *" $p "*) continue ;; esac
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done

[ -z "$missing" ] && exit 0

echo "install-deps: installing:$missing"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# dpkg without an fsync per unpacked file (--force-unsafe-io, as Debian's own build chroots
# and container images do): on a fresh machine most of the install is dpkg, and a crash
# part-way may leave the packages being unpacked (these, or ones apt upgrades on the way)
# to reinstall with apt-get install --reinstall.
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends -o DPkg::Options::=--force-unsafe-io $missing
