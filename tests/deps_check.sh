#!/bin/sh
# deps_check.sh PKG_CONFIG_MODULES... - the build tier of scripts/install-deps.sh (what
# `make demo` installs) holds every package building needs: the one owning each library's
# pkg-config file (the Makefile's PKGS and AV_PKGS), the compiler and make, xxd and scdoc.
set -eu
build=$(sh scripts/install-deps.sh --list build)
fail=0
need() { # need PACKAGE WHY
	echo "$build" | grep -qx "$1" || { echo "deps_check: $1 ($2) is not in the build tier" >&2; fail=1; }
}
for m in "$@"; do
	pc=$(pkg-config --variable=pcfiledir "$m")/$m.pc
	pkg=$(dpkg -S "$(realpath "$pc")" | cut -d: -f1)
	need "$pkg" "pkg-config $m"
done
need gcc "cc"
need libc6-dev "the C library's headers"
need make "make"
need pkg-config "pkg-config"
for c in xxd scdoc; do
	need "$(dpkg -S "$(command -v $c)" | cut -d: -f1)" "$c"
done
[ "$fail" = 0 ] && echo "deps_check: the build tier has what the build needs ($# libraries)"
exit $fail
