#!/usr/bin/env bash
# Packs what a GPU host without a build of its own needs to run bench/harness/run.sh with binaries built here:
# ptxbench, ptxbench-runner and the solution worker beside it (stripped), Debian's bwrap, and the shared
# libraries of these that such a host may lack (those not in its base system, looked up with ldd here).
#   bench/harness/bundle.sh [DEST]          (default .device; build first: scripts/build)
# On the GPU host, from the repository's root:
#   export PATH=$PWD/DEST/bin:$PATH LD_LIBRARY_PATH=$PWD/DEST/lib PTXBENCH_BIN=DEST/bin
#   bench/harness/run.sh shipped
# run.sh refuses to start when ldd finds a library missing.
set -euo pipefail
cd "$(dirname "$0")/../.."
dest=${1:-.device}
rm -rf "$dest/bin" "$dest/lib"  # not $dest/store (record.sh's store, carried between calls)
mkdir -p "$dest/bin" "$dest/lib"
for binary in build/ptxbench build/ptxbench-runner build/libptxbench-solution-worker.so; do
  strip -o "$dest/bin/$(basename "$binary")" "$binary"
done
cp "$(command -v bwrap)" "$dest/bin/"
# The libraries outside a base system (C and C++ runtimes, libcap, libselinux, OpenSSL and the CUDA toolkit's
# own are the host's): those of fmt, SQLite, hiredis, cpp-httplib and libcurl's, by the names ldd resolves.
ldd "$dest"/bin/* | awk '/=> \// {print $1, $3}' | sort -u | while read -r name path; do
  case $name in
    libfmt.so.* | libsqlite3.so.* | libhiredis.so.* | libcpp-httplib.so.* | libcurl.so.* | libnghttp2.so.* | \
      librtmp.so.* | libssh2.so.* | libpsl.so.* | libidn2.so.* | libbrotli*.so.* | libldap-*.so.* | \
      liblber-*.so.* | libsasl2.so.* | libunistring.so.*)
      cp -L "$path" "$dest/lib/$name"
      ;;
  esac
done
# The commit the binaries were built from, which a record names: the last one that changed the code they are
# built from, so that a record goes on across commits of other files ("-dirty": with changes to that code).
code=(src include kits arch tasks baselines CMakeLists.txt)
commit=$(git log -1 --format=%H -- "${code[@]}" | cut -c1-12)
[[ -z $(git status --porcelain -- "${code[@]}") ]] || commit+=-dirty
echo "$commit" > "$dest/commit"
du -sh "$dest"
ls "$dest/bin" "$dest/lib"
