#!/usr/bin/env bash
# Install the EFA userspace (libfabric, aws-ofi-nccl) into a GPU image. Shared by images/verl and images/miles.
#   install-efa.sh VERSION SHA256
# Both are required: take them from the installer's release notes for the version matching your node AMI. The
# host provides the kernel module (--skip-kmod). `fi_info -p efa` needs an EFA device, which a build node lacks,
# so the check is on the installed artefacts.
set -euo pipefail
version="${1:?EFA installer version required}"
sha256="${2:?EFA installer SHA-256 required}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
tarball="aws-efa-installer-${version}.tar.gz"
curl -fsSL -o "$work/$tarball" "https://efa-installer.amazonaws.com/${tarball}"
echo "${sha256}  $work/$tarball" | sha256sum -c -
tar -xzf "$work/$tarball" -C "$work"
(cd "$work/aws-efa-installer" && ./efa_installer.sh -y --skip-kmod --skip-limit-conf --no-verify)
test -x /opt/amazon/efa/bin/fi_info
