#!/bin/sh
# install-deps.sh - make sure the Debian packages gpuperf needs are present.
#
# Checks each package with dpkg-query. If some are missing: as root, runs
# apt-get to install them; otherwise prints the exact command and fails.
# `make` calls this once per build directory; CI calls it directly.
#
#   scripts/install-deps.sh          check, and install what is missing
#   scripts/install-deps.sh --list   print the package list
set -eu

# gcc, make: build; libsqlite3-dev: trace processor; zlib1g-dev: compressed
# trace packets; ocl-icd-opencl-dev, opencl-headers, pocl-opencl-icd: the
# OpenCL backend and its tests on a real (CPU) driver; clang: the clang
# build check and libFuzzer targets; libclang-rt-14-dev: the libFuzzer
# runtime (make fuzz); pkg-config: install checks.
# libvulkan-dev, mesa-vulkan-drivers (lavapipe), glslang-tools: the Vulkan
# layer, its sample and tests; vulkan-tools (vkcube), vulkan-validationlayers,
# xvfb, xauth: the Vulkan tests that run vkcube and the validation layer.
# clpeak: the derived Utilization test records a real OpenCL benchmark
# (skipped without it); tmux: the `gpuperf top` test drives it (skipped
# without it).
PACKAGES="gcc make libc6-dev libsqlite3-dev zlib1g-dev ocl-icd-opencl-dev \
opencl-headers pocl-opencl-icd clang libclang-rt-14-dev clang-format pkg-config \
libvulkan-dev mesa-vulkan-drivers glslang-tools vulkan-tools \
vulkan-validationlayers xvfb xauth clpeak tmux"
# gpuperf export --to clickhouse:// and its two-shard test
PACKAGES="$PACKAGES clickhouse-server clickhouse-client"
# libcurl4-openssl-dev: the export's HTTP(S) client (TLS, keep-alive,
# timeouts); libssl-dev: SHA-256 (libcrypto) for its default trace names.
PACKAGES="$PACKAGES libcurl4-openssl-dev libssl-dev"
# openssl: the HTTPS export test makes its server's certificate.
PACKAGES="$PACKAGES openssl"
# The HTML report test loads the page in headless Chromium.
PACKAGES="$PACKAGES chromium"
# liblttng-ust-dev, lttng-tools: bench/activity's peer, an LTTng-UST
# tracepoint recorded by a session daemon the bench starts (issue 15).
PACKAGES="$PACKAGES liblttng-ust-dev lttng-tools"
# valgrind: `make bench-instructions` counts instructions per record and
# per enqueue with callgrind.
PACKAGES="$PACKAGES valgrind"
PACKAGES="$PACKAGES python3-pytest python3-pandas python3-venv"
# libgl-dev, libegl-dev, libx11-dev: libgpuperf-gl.so and its test
# programs (tests/gl, tests/programs/gl_hud_app.c); libgl1-mesa-dri,
# libegl-mesa0, libglx-mesa0: Mesa's llvmpipe, the GL driver the tests run
# on (Xvfb); mesa-utils: glxgears and es2gears_x11, recorded by the tests;
# libepoxy-dev: the loader test's program; x11-apps: xwd, which takes the
# screenshots the HUD tests compare.
PACKAGES="$PACKAGES libgl-dev libegl-dev libx11-dev libgl1-mesa-dri \
libegl-mesa0 libglx-mesa0 mesa-utils libepoxy-dev x11-apps"

if [ "${1:-}" = "--list" ]; then
  echo $PACKAGES
  exit 0
fi

missing=""
for p in $PACKAGES; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done

[ -z "$missing" ] && exit 0

cmd="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" -ne 0 ]; then
  echo "gpuperf: missing Debian packages:$missing" >&2
  echo "gpuperf: install them with:  sudo apt-get update && sudo $cmd" >&2
  exit 1
fi
echo "gpuperf: installing missing Debian packages:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >&2
