"""A local Kubernetes cluster for trying a release without a cloud account: the real API server, scheduler,
controller manager, etcd and KubeRay operator built from pinned Go modules, with kwok nodes shaped like the
instance types the values name (`grpo-cluster`, docs/local-cluster.md). The test suite's control plane is this one."""
