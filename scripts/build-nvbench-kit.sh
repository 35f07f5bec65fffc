#!/usr/bin/env bash
# Build one nvbench example WITHOUT network, for the real `--jsonbin` capture of docs/gpu-lease.md
# ("Call 4"). The GPU machine reaches nothing outside it, and nvbench's CMake downloads
# rapids-cmake, CPM.cmake, fmt and nlohmann/json from GitHub: this points every one of them at a
# local copy instead. Builds here (no GPU needed) or on the GPU machine.
#
#   scripts/build-nvbench-kit.sh SRC BUILD [OUT]
#
# SRC holds the sources, unpacked (each `git archive` of the named commit):
#   SRC/nvbench        NVIDIA/nvbench 66212f1da71cc9afb2894a46fa8f234cbdd6c0d8 (2026-08-12)
#   SRC/rapids-cmake   rapidsai/rapids-cmake tag v25.12.00 (nvbench asks for 25.12)
#   SRC/fmt            fmtlib/fmt tag 12.2.0
#   SRC/json           nlohmann/json (include/, single_include/, CMakeLists.txt, cmake/)
#   SRC/cpm/CPM_0.42.0.cmake   cpm-cmake/CPM.cmake tag v0.42.0, cmake/CPM.cmake
# BUILD is the build folder. OUT (default .carry/nvbench) receives the example and the shared
# libraries it needs beyond the driver's, with `run.sh` that sets LD_LIBRARY_PATH.
# Needs cmake >= 3.30.4 and ninja (`pip install "cmake>=3.30.4,<3.32" ninja`), nvcc, and a host
# compiler nvcc accepts (CXX/CUDAHOSTCXX: g++-11 for CUDA 11.8; the default for CUDA 13).
set -euo pipefail
src=${1:?usage: build-nvbench-kit.sh SRC BUILD [OUT]}
build=${2:?usage: build-nvbench-kit.sh SRC BUILD [OUT]}
out=${3:-.carry/nvbench}
src=$(cd "$src" && pwd)
cxx=${CXX:-c++}
for d in nvbench rapids-cmake fmt json; do
  [ -d "$src/$d" ] || { echo "build-nvbench-kit: $src/$d is missing (see the header of this script)" >&2; exit 2; }
done
[ -f "$src/cpm/CPM_0.42.0.cmake" ] || { echo "build-nvbench-kit: $src/cpm/CPM_0.42.0.cmake is missing" >&2; exit 2; }
cmake -S "$src/nvbench" -B "$build" -G Ninja \
  -DNVBench_ENABLE_EXAMPLES=ON -DNVBench_ENABLE_CUPTI=OFF -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-90}" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CUDA_HOST_COMPILER="${CUDAHOSTCXX:-$cxx}" \
  -DCMAKE_CUDA_RUNTIME_LIBRARY=Static \
  -DFETCHCONTENT_FULLY_DISCONNECTED=ON \
  "-DFETCHCONTENT_SOURCE_DIR_RAPIDS-CMAKE=$src/rapids-cmake" \
  -DCPM_DOWNLOAD_LOCATION="$src/cpm/CPM_0.42.0.cmake" \
  -DCPM_fmt_SOURCE="$src/fmt" -DCPM_nlohmann_json_SOURCE="$src/json"
cmake --build "$build" --target nvbench.example.cpp17.throughput
mkdir -p "$out/lib"
cp "$build/bin/nvbench.example.cpp17.throughput" "$out/"
# libnvbench and anything else resolved from the build or the toolkit (never the driver's).
ldd "$out/nvbench.example.cpp17.throughput" | awk '$3 ~ /^\// {print $3}' | while read -r lib; do
  case "$lib" in
    "$build"/* | */cuda*/* | */libcudart* | */libfmt*) cp -L "$lib" "$out/lib/" ;;
  esac
done
cat > "$out/run.sh" <<'RUN'
#!/bin/sh
# The example with its own libraries; arguments pass through (cgp-gate adds --json PATH --jsonbin).
here=$(cd "$(dirname "$0")" && pwd)
LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$here/nvbench.example.cpp17.throughput" "$@"
RUN
chmod +x "$out/run.sh"
du -sh "$out"
ldd "$out/nvbench.example.cpp17.throughput"
