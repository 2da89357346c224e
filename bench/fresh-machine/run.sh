#!/usr/bin/env bash
# scripts/run on a fresh Debian 12: a bookworm minbase made with debootstrap, given git and ca-certificates (to
# clone) and the host's CUDA toolkit (bind-mounted read-only at /usr/local/cuda-13.0), then a fresh clone of this
# repository and `time scripts/run`, the packages' install included. Run as root on a Debian host:
#   bench/fresh-machine/run.sh [ROOTFS]          (default /tmp/ptxbench-bookworm; removed first)
# A chroot cannot create the user namespaces bwrap needs, so the job runs with PTXBENCH_SANDBOX=off (it judges
# the shipped reference solutions only); on a real machine the sandbox is on and the job takes longer by its
# setup (about 20 s for the 79 Hopper tasks on 2 cores).
set -euo pipefail
rootfs=${1:-/tmp/ptxbench-bookworm}
repo=$(cd "$(dirname "$0")/../.." && pwd)
cuda=$(readlink -f /usr/local/cuda)
command -v debootstrap >/dev/null || apt-get install -y -q debootstrap >/dev/null
rm -rf "$rootfs"
debootstrap --variant=minbase bookworm "$rootfs" http://deb.debian.org/debian >/dev/null
cleanup() { umount -R "$rootfs/proc" "$rootfs/dev" "$rootfs/sys" "$rootfs$cuda" "$rootfs/src" 2>/dev/null || true; }
trap cleanup EXIT
mount -t proc proc "$rootfs/proc"
mount --rbind /dev "$rootfs/dev"
mount --rbind /sys "$rootfs/sys"
cp /etc/resolv.conf "$rootfs/etc/"
mkdir -p "$rootfs$cuda" "$rootfs/src"
mount --bind "$cuda" "$rootfs$cuda"
mount -o remount,bind,ro "$rootfs$cuda"
ln -sfn "$cuda" "$rootfs/usr/local/cuda"
mount --bind "$repo" "$rootfs/src"
chroot "$rootfs" bash -c 'apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -q --no-install-recommends git ca-certificates >/dev/null && git clone -q /src /root/ptxbench'
chroot "$rootfs" env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
  PTXBENCH_SANDBOX=off bash -c 'cd /root/ptxbench && git log --oneline -1 && start=$(date +%s) &&
  scripts/run > /root/run.log 2>&1; rc=$?; echo "scripts/run: exit $rc in $(( $(date +%s) - start )) s"
  grep -E "newly installed|^Fetched .* MB|^\[[0-9]+/[0-9]+\] Linking CXX executable ptxbench$" /root/run.log
  tail -4 /root/run.log'
